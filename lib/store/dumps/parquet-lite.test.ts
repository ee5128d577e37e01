import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { describe, expect, test } from "vitest";
import { writeParquetLite, type LiteColumn } from "./parquet-lite";

function readBack(bytes: Uint8Array) {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  return { metadata, rows: () => parquetReadObjects({ file, metadata }) };
}

describe("parquet-lite writer", () => {
  test("DOUBLE / BOOLEAN / STRING columns with nulls, NaN and ±Infinity round-trip through hyparquet", async () => {
    const n = 1000;
    const cols: LiteColumn[] = [
      { name: "d", type: "DOUBLE", data: Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : i % 11 === 0 ? NaN : i % 13 === 0 ? -Infinity : i * 0.5 - 3)) },
      { name: "b", type: "BOOLEAN", data: Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : i % 3 === 0)) },
      { name: "s", type: "STRING", data: Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : `v${i % 9}·ü`)) },
      { name: "all_null", type: "DOUBLE", data: Array.from({ length: n }, () => null) },
    ];
    const { metadata, rows } = readBack(writeParquetLite(cols, n, [{ key: "k", value: "{\"v\":4}" }]));
    expect(Number(metadata.num_rows)).toBe(n);
    expect(metadata.key_value_metadata).toEqual([{ key: "k", value: "{\"v\":4}" }]);
    const got = await rows();
    expect(got).toHaveLength(n);
    for (let i = 0; i < n; i++) {
      const r = got[i]!;
      expect(r.d).toEqual(cols[0]!.data[i]); // toEqual: NaN equals NaN
      expect(r.b).toBe(cols[1]!.data[i]);
      expect(r.s).toBe(cols[2]!.data[i]);
      expect(r.all_null).toBeNull();
    }
  });

  test("odd row counts (partial bit-packed groups) and an empty table", async () => {
    for (const n of [1, 7, 8, 9, 17]) {
      const data = Array.from({ length: n }, (_, i) => (i % 2 ? i : null));
      const bools = Array.from({ length: n }, (_, i) => i % 3 === 1);
      const { rows } = readBack(writeParquetLite([{ name: "x", type: "DOUBLE", data }, { name: "y", type: "BOOLEAN", data: bools }], n));
      const got = await rows();
      expect(got.map((r): unknown => r.x)).toEqual(data);
      expect(got.map((r): unknown => r.y)).toEqual(bools);
    }
    const empty = readBack(writeParquetLite([{ name: "x", type: "DOUBLE", data: [] }], 0));
    expect(Number(empty.metadata.num_rows)).toBe(0);
    expect(empty.metadata.schema.map((e) => e.name)).toEqual(["root", "x"]);
  });
});
