import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  PyFloat,
  dumpPy,
  dumpPyIndent1,
  formatFloat,
  formatInt,
  formatString,
  parsePyJson,
  pyFloat,
} from "./python-json";
import { FIXTURES_DIR } from "@/lib/testing/fixtures";

const FIXTURES = FIXTURES_DIR;

describe("formatFloat matches Python repr", () => {
  it.each([
    [1755000041.0, "1755000041.0"],
    [0.5, "0.5"],
    [-1.0, "-1.0"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [0.000015, "1.5e-05"],
    [1e16, "1e+16"],
    [9999999999999998.0, "9999999999999998.0"],
    [1.2345678901234568e17, "1.2345678901234568e+17"],
    [1.5e300, "1.5e+300"],
    [5e-324, "5e-324"],
    [1e-100, "1e-100"],
    [0.30000000000000004, "0.30000000000000004"],
    [1755000041.123456, "1755000041.123456"],
    [0, "0.0"],
    [-0, "-0.0"],
    [NaN, "NaN"],
    [Infinity, "Infinity"],
    [-Infinity, "-Infinity"],
    [1e21, "1e+21"],
    [123e-7, "1.23e-05"],
  ])("%s -> %s", (x, want) => {
    expect(formatFloat(x)).toBe(want);
  });
});

describe("formatInt", () => {
  it("prints plain digits, even past 2^53 and 1e21", () => {
    expect(formatInt(-1)).toBe("-1");
    expect(formatInt(61234)).toBe("61234");
    expect(formatInt(-0)).toBe("0");
    expect(formatInt(1e22)).toBe("10000000000000000000000");
    expect(() => formatInt(1.5)).toThrow();
  });
});

describe("formatString escapes like json.dumps(ensure_ascii=True)", () => {
  it.each([
    ["plain", '"plain"'],
    ['q"b\\', '"q\\"b\\\\"'],
    ["\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'],
    ["\u0001\u001f", '"\\u0001\\u001f"'],
    ["\u007f", '"\\u007f"'],
    ["sglang é", '"sglang \\u00e9"'],
    ["😀", '"\\ud83d\\ude00"'],
    ["</a>&/", '"</a>&/"'],
    ["\uffff\u4e2d", '"\\uffff\\u4e2d"'],
  ])("%j", (s, want) => {
    expect(formatString(s)).toBe(want);
  });
});

describe("dumpPy", () => {
  it("compact and spaced separators, Map order, float tags", () => {
    const v = new Map<string, number | PyFloat | string | boolean | null | number[]>([
      ["10", 1],
      ["2", pyFloat(2)],
      ["a", [1, 2]],
      ["b", null],
      ["c", true],
    ]);
    expect(dumpPy(v)).toBe('{"10":1,"2":2.0,"a":[1,2],"b":null,"c":true}');
    expect(dumpPy(v, ", ", ": ")).toBe('{"10": 1, "2": 2.0, "a": [1, 2], "b": null, "c": true}');
  });

  it("indent=1 layout with empty containers and nesting", () => {
    const v = { a: {}, b: [], c: [1, { d: 0.5 }], e: "x" };
    expect(dumpPyIndent1(v)).toBe(
      '{\n "a": {},\n "b": [],\n "c": [\n  1,\n  {\n   "d": 0.5\n  }\n ],\n "e": "x"\n}',
    );
  });
});

describe("parsePyJson", () => {
  it("keeps int/float distinction and non-finite tokens", () => {
    const v = parsePyJson('{"a":1,"b":1.0,"c":0.5,"d":NaN,"e":Infinity,"f":-Infinity,"g":1e+16,"h":-0.0}') as Record<
      string,
      unknown
    >;
    expect(v.a).toBe(1);
    expect(v.b).toEqual(new PyFloat(1));
    expect(v.c).toBe(0.5);
    expect(v.d).toBeNaN();
    expect(v.e).toBe(Infinity);
    expect(v.f).toBe(-Infinity);
    expect(v.g).toEqual(new PyFloat(1e16));
    expect(Object.is((v.h as PyFloat).value, -0)).toBe(true);
  });

  it("returns a Map for integer-like keys so their order survives", () => {
    const text = '{"b":1,"3":2,"1":3}';
    const v = parsePyJson(text);
    expect(v).toBeInstanceOf(Map);
    expect(dumpPy(v)).toBe(text);
  });

  it("decodes escapes including surrogate pairs and does not treat __proto__ as the prototype", () => {
    const v = parsePyJson('{"s":"\\u00e9\\ud83d\\ude00\\n\\/","__proto__":1}') as Record<string, unknown>;
    expect(v.s).toBe("é😀\n/");
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["s", "__proto__"]);
  });

  it.each(["{", '{"a":}', "[1,]", "01x", '"abc', "{} x", "nul", '"\\x"', "-", "1.", "1e"])("rejects %j", (t) => {
    expect(() => parsePyJson(t)).toThrow(SyntaxError);
  });

  it("re-serializes every line of the miles-demo telemetry byte for byte", () => {
    const dash = resolve(FIXTURES, "miles-demo/dashboard");
    const files = [
      "metrics.jsonl",
      "topology.jsonl",
      "phases/19700112_13.jsonl",
      "gpu_util/19700112_13.jsonl",
      "engine_series/19700112_13.jsonl",
      "trajectories/19700112_13.jsonl",
    ];
    let n = 0;
    for (const f of files) {
      const lines = readFileSync(resolve(dash, f), "utf8").split("\n");
      expect(lines.pop()).toBe("");
      for (const line of lines) {
        expect(dumpPy(parsePyJson(line))).toBe(line);
        n++;
      }
    }
    expect(n).toBeGreaterThan(3000);
    const catalog = readFileSync(resolve(dash, "lane_catalog.json"), "utf8");
    expect(dumpPy(parsePyJson(catalog), ", ", ": ")).toBe(catalog);
    const meta = readFileSync(resolve(dash, "meta.json"), "utf8");
    expect(dumpPyIndent1(parsePyJson(meta))).toBe(meta);
  });
});

describe("formatFloat against CPython", () => {
  it("agrees with repr() on 20 000 random doubles of every magnitude and the notation boundaries", async () => {
    const { execFileSync } = await import("node:child_process");
    const xs: number[] = [];
    const buf = new Float64Array(1);
    const words = new Uint32Array(buf.buffer);
    for (let i = 0; i < 15000; i++) {
      words[0] = (Math.random() * 2 ** 32) >>> 0;
      words[1] = (Math.random() * 2 ** 32) >>> 0;
      if (Number.isFinite(buf[0])) xs.push(buf[0] as number);
    }
    for (let e = -8; e <= 18; e++) {
      for (const m of [1, 0.9999999999999999, 1.0000000000000002, 9.999999999999998, 5, 1.5]) xs.push(m * 10 ** e, -m * 10 ** e);
    }
    for (let i = 0; i < 4000; i++) xs.push(1755000000 + Math.random() * 1e5, Math.random() * 1e-3, Math.round(Math.random() * 1e6));
    const hex = xs.map((x) => {
      buf[0] = x;
      return Buffer.from(buf.buffer).toString("hex");
    });
    const script = "import sys,struct\nfor l in sys.stdin: print(repr(struct.unpack('<d', bytes.fromhex(l.strip()))[0]))";
    const py = execFileSync("python3", ["-c", script], { input: hex.join("\n") + "\n", maxBuffer: 1 << 26 }).toString().trim().split("\n");
    const mismatches = xs.filter((x, i) => formatFloat(x) !== py[i]);
    expect(mismatches).toEqual([]);
  });
});
