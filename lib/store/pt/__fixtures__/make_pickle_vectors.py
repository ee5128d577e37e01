#!/usr/bin/env python3
"""Regenerate pickle-vectors.json (CPython pickle, protocols 0-5) for pickle.test.ts."""
import pickle, collections, math, json, sys
class Foo:
    def __init__(self): self.x = 1; self.name = "foo"
class Kw:
    def __new__(cls, *a, **k):
        o = object.__new__(cls); return o
    def __init__(self, a=0, b=0): self.a=a; self.b=b
    def __getnewargs_ex__(self): return ((self.a,), {"b": self.b})
Foo.__module__ = "mylib.things"; Foo.__qualname__ = "Foo"
Kw.__module__ = "mylib.things"; Kw.__qualname__ = "Kw"
import types, sys as _s
m = types.ModuleType("mylib.things"); m.Foo = Foo; m.Kw = Kw; _s.modules["mylib.things"] = m; _s.modules["mylib"] = types.ModuleType("mylib")
shared = [7, 8]
obj = {
  "ints": [0, 1, -1, 2**2100, 255, 256, 65535, 65536, -2**31, 2**31 - 1, 2**31, 2**53, -2**53, 2**64, -2**70],
  "floats": [0.0, -0.0, 1.5, -2.25e-300, float("inf"), float("-inf"), 1e308],
  "nan": float("nan"),
  "strs": ["", "abc", "héllo", "日本語", "emoji \U0001F600", "x" * 300],
  "bytes": [b"", b"\x00\x01\xff", bytes(range(256))],
  "ba": bytearray(b"\x10\x20"),
  "tuple": (1, (2, 3), (), (4, 5, 6, 7), (8, 9, 10)),
  "none": None, "t": True, "f": False,
  "shared": [shared, shared],
  "set": {1, 2, 3}, "fs": frozenset({"a"}),
  "od": collections.OrderedDict([("z", 1), ("a", 2)]),
  "intkeys": {1: "one", 2: "two"},
  "foo": Foo(),
  "kw": Kw(3, b=4),
}
out = {}
for p in range(6):
    out[str(p)] = pickle.dumps(obj, protocol=p).hex()
import os
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pickle-vectors.json"), "w") as fh:
    json.dump(out, fh)
    fh.write("\n")
