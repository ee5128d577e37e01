#!/usr/bin/env python3
"""Regenerate golden.json for pt.fixtures.test.ts (stdlib only; torch is NOT needed).

Decodes every .pt under $PT_FIXTURES (default: the repo's fixtures/miles-demo) with
zipfile + pickle stubs, decodes tensor storages with struct, and writes per file:
  * sha256 of a canonical serialisation of the whole graph (see canon() — mirrored
    in the TS test),
  * a few explicit spot values used for readable assertions.
"""
import glob, hashlib, io, json, math, os, pickle, struct, sys, zipfile

ROOT = os.environ.get("PT_FIXTURES", os.path.join(os.path.dirname(__file__), "../../../../fixtures/miles-demo"))
FMT = {"FloatStorage": ("f32", "<f", 4), "DoubleStorage": ("f64", "<d", 8),
       "LongStorage": ("i64", "<q", 8), "IntStorage": ("i32", "<i", 4),
       "ShortStorage": ("i16", "<h", 2), "CharStorage": ("i8", "<b", 1),
       "ByteStorage": ("u8", "<B", 1), "BoolStorage": ("bool", "<B", 1)}


class Tensor:
    def __init__(self, dtype, shape, values):
        self.dtype, self.shape, self.values = dtype, shape, values


def load(path):
    z = zipfile.ZipFile(path)
    prefix = z.namelist()[0].rsplit("/", 1)[0]

    class StorageType:
        def __init__(self, name): self.name = name

    def rebuild(storage, offset, size, stride, *_):
        cls, key = storage
        dtype, fmt, isz = FMT[cls]
        raw = z.read(f"{prefix}/data/{key}")
        n = len(raw) // isz
        elems = struct.unpack("<%d%s" % (n, fmt[1]), raw)
        out = []
        def rec(dim, base):
            if dim == len(size):
                out.append(elems[base]); return
            for i in range(size[dim]):
                rec(dim + 1, base + i * stride[dim])
        rec(0, offset)
        return Tensor(dtype, list(size), out)

    class U(pickle.Unpickler):
        def find_class(self, m, n):
            if (m, n) == ("collections", "OrderedDict"): return dict
            if (m, n) == ("torch._utils", "_rebuild_tensor_v2"): return rebuild
            if m == "torch" and n.endswith("Storage"): return StorageType(n)
            raise RuntimeError(f"unexpected global {m}.{n}")

        def persistent_load(self, pid):
            assert pid[0] == "storage"
            return (pid[1].name, pid[2])

    return U(io.BytesIO(z.read(f"{prefix}/data.pkl"))).load()


def canon(x, out):
    """Canonical byte serialisation; numbers (int and float alike) as f64 bits."""
    if x is None: out.append(b"N")
    elif x is True: out.append(b"T")
    elif x is False: out.append(b"F")
    elif isinstance(x, (int, float)): out.append(b"n" + struct.pack(">d", float(x)).hex().encode())
    elif isinstance(x, str):
        b = x.encode("utf-8"); out.append(b"s%d:" % len(b) + b)
    elif isinstance(x, (list, tuple)):
        out.append(b"[")
        for v in x: canon(v, out)
        out.append(b"]")
    elif isinstance(x, dict):
        out.append(b"{")
        for k in sorted(x):
            canon(k, out); canon(x[k], out)
        out.append(b"}")
    elif isinstance(x, Tensor):
        out.append(("t%s:%s:" % (x.dtype, ",".join(map(str, x.shape)))).encode())
        for v in x.values: canon(v, out)
        out.append(b";")
    else:
        raise TypeError(type(x))


def f32(v):
    return v  # already widened to a Python float by struct


def spot(path, g):
    if "rollout_data" in path:
        return {
            "rollout_id": g["rollout_id"],
            "keys": list(g.keys()),
            "sample_keys": list(g["samples"][0].keys()),
            "spec_info_0": g["samples"][0]["spec_info"],
            "prefix_cache_info_0": g["samples"][0]["prefix_cache_info"],
            "n": len(g["samples"]),
            "samples": [{
                "index": s["index"], "group_index": s["group_index"], "status": s["status"],
                "response_length": s["response_length"], "n_tokens": len(s["tokens"]),
                "tokens_head": s["tokens"][:3], "tokens_last": s["tokens"][-1],
                "weight_versions": s["weight_versions"], "reward": s["reward"],
                "remove_sample": s["remove_sample"],
                "lp0": (s["rollout_log_probs"] or [None])[0],
                "lp_sum": math.fsum(s["rollout_log_probs"] or []),
            } for s in g["samples"]],
        }
    rd = g["rollout_data"]
    rows = []
    for i, idx in enumerate(rd["sample_indices"]):
        t = rd["tokens"][i]; m = rd["loss_masks"][i]
        lp = rd["log_probs"][i] if rd.get("log_probs") else None
        rows.append({
            "sample_index": idx, "total_length": rd["total_lengths"][i],
            "response_length": rd["response_lengths"][i],
            "tokens_dtype": t.dtype, "tokens_shape": t.shape, "tokens_head": t.values[:3],
            "tokens_last": t.values[-1], "tokens_sum": sum(t.values),
            "loss_mask_dtype": m.dtype, "loss_mask_sum": sum(m.values), "loss_mask_len": len(m.values),
            "log_probs_dtype": lp.dtype if lp else None,
            "log_probs_head": lp.values[:2] if lp else None,
            "log_probs_fsum": math.fsum(lp.values) if lp else None,
        })
    return {"rollout_id": g["rollout_id"], "rank": g["rank"], "cp_rank": g.get("cp_rank"),
            "cp_size": g.get("cp_size"), "qkv_format": g.get("qkv_format"),
            "columns": list(rd.keys()), "rewards": rd["rewards"], "rows": rows}


def main():
    res = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "*_data", "*.pt"))):
        rel = os.path.relpath(path, ROOT)
        g = load(path)
        out = []; canon(g, out)
        res[rel] = {"sha256": hashlib.sha256(b"".join(out)).hexdigest(), "spot": spot(rel, g)}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "golden.json"), "w") as f:
        json.dump(res, f, indent=None, separators=(",", ":"), allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
