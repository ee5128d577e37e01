import { describe, expect, test } from "vitest";
import { parseLenientJson } from "@/lib/store/format";
import { tokenizerFromJson } from "./tokenizer";

describe("lenient JSON", () => {
  test("accepts bare NaN/Infinity outside strings and leaves string contents alone", () => {
    const v = parseLenientJson('{"a":NaN,"b":[Infinity,-Infinity],"s":"NaN and \\"Infinity\\"","c":1}') as Record<string, unknown>;
    expect(v.a).toBeNaN();
    expect(v.b).toEqual([Infinity, -Infinity]);
    expect(v.s).toBe('NaN and "Infinity"');
    expect(v.c).toBe(1);
  });
  test("still rejects real garbage", () => {
    expect(() => parseLenientJson('{"a":')).toThrow();
  });
});

describe("tokenizer per-id decoding", () => {
  test("WordLevel without decoder: the token string", () => {
    const t = tokenizerFromJson({ model: { type: "WordLevel", vocab: { hi: 0, there: 1 } }, decoder: null });
    expect([t.decodeOne(0), t.decodeOne(1), t.decodeOne(99)]).toEqual(["hi", "there", ""]);
  });
  test("ByteLevel BPE maps the GPT-2 byte alphabet back to UTF-8", () => {
    const t = tokenizerFromJson({
      model: { type: "BPE", vocab: { "Ġhello": 0, "Ċ": 1, "Ã©": 2, "Ã": 3 } },
      added_tokens: [{ id: 4, content: "<|im_end|>", special: true }],
      decoder: { type: "ByteLevel" },
    });
    expect([0, 1, 2, 3, 4].map((i) => t.decodeOne(i))).toEqual([" hello", "\n", "é", "\uFFFD", "<|im_end|>"]);
  });
  test("sentencepiece-style Sequence (Replace, ByteFallback, Fuse, Strip)", () => {
    const t = tokenizerFromJson({
      model: { type: "BPE", vocab: { "▁hello": 0, "<0x0A>": 1, world: 2 } },
      decoder: {
        type: "Sequence",
        decoders: [
          { type: "Replace", pattern: { String: "▁" }, content: " " },
          { type: "ByteFallback" },
          { type: "Fuse" },
          { type: "Strip", content: " ", start: 1, stop: 0 },
        ],
      },
    });
    expect([0, 1, 2].map((i) => t.decodeOne(i))).toEqual(["hello", "\n", "world"]);
  });
  test("Metaspace strips the prefix space of the (only) first token; Unigram vocab lists", () => {
    const t = tokenizerFromJson({
      model: { type: "Unigram", vocab: [["▁a", -1], ["b", -2]] },
      decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: "always" },
    });
    expect([t.decodeOne(0), t.decodeOne(1)]).toEqual(["a", "b"]);
  });
});
