import { describe, expect, test } from "vitest";
import { chunkSize, expectedWidth, logitRanges, reassemble } from "./cp";
import { cpSlice } from "./test-fixtures";

describe("CP offset math", () => {
  test("thd chunks: rank k holds chunks k and 2C−k−1, clipped to the response logits", () => {
    // T=16, R=10 ⇒ P=6, response logits [5, 15); C=2 ⇒ cs=4, chunks [0,4) [4,8) [8,12) [12,16)
    const g = { totalLength: 16, responseLength: 10, cpSize: 2 };
    expect(chunkSize(g)).toBe(4);
    expect(logitRanges(g, 0)).toEqual([
      [5, 4],
      [12, 15],
    ]);
    expect(logitRanges(g, 1)).toEqual([
      [5, 8],
      [8, 12],
    ]);
    expect(expectedWidth(g, 0)).toBe(3);
    expect(expectedWidth(g, 1)).toBe(7);
  });

  test("bshd uses the padded max_seq_len for the chunk size", () => {
    expect(chunkSize({ totalLength: 16, responseLength: 10, cpSize: 2, qkvFormat: "bshd", maxSeqLen: 24 })).toBe(6);
    expect(chunkSize({ totalLength: 16, responseLength: 10, cpSize: 2, qkvFormat: "thd", maxSeqLen: 24 })).toBe(4);
  });

  test("reassembly inverts the per-rank slicing for several sizes", () => {
    for (const [T, R, C] of [
      [16, 10, 2],
      [37, 30, 4],
      [9, 1, 2],
      [50, 49, 3],
    ] as const) {
      const g = { totalLength: T, responseLength: R, cpSize: C };
      const full = Array.from({ length: R }, (_, i) => i + 0.5);
      const chunks = new Map(Array.from({ length: C }, (_, k) => [k, cpSlice(full, g, k)] as const));
      expect([...reassemble(g, chunks)]).toEqual(full);
    }
  });

  test("reassembly rejects a missing rank and a chunk of the wrong width", () => {
    const g = { totalLength: 16, responseLength: 10, cpSize: 2 };
    expect(() => reassemble(g, new Map([[0, [1, 2, 3]]]))).toThrow(/cp_rank 1 of 2 missing/);
    expect(() =>
      reassemble(
        g,
        new Map([
          [0, [1, 2]],
          [1, [1, 2, 3, 4, 5, 6, 7]],
        ]),
      ),
    ).toThrow(/CP reassembly/);
  });
});
