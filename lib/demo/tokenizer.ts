/**
 * A small byte-level BPE tokenizer in the Hugging Face `tokenizer.json` layout (the
 * Qwen2/3 family's shape: ByteLevel decoder, Qwen pre-tokenizer regex, chat special
 * tokens as added tokens), built from the words the demo text generator can produce.
 *
 * Policy: token ids only have to DECODE to readable text in the token view
 * (lib/store/dumps/tokenizer.ts reads the ByteLevel decoder). Every word piece the
 * generator emits is one vocabulary entry (" the" → "Ġthe"); anything else falls back
 * to byte tokens, which the ByteLevel decoder also maps back to text. Merges are the
 * prefix chains of the word entries, so the file is also a loadable BPE model.
 */
import fs from "node:fs";
import path from "node:path";

export const SPECIAL_TOKENS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<tool_response>",
  "</tool_response>",
] as const;

/** Qwen2's pre-tokenizer pattern as written in its tokenizer.json. */
const QWEN_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** The same pattern for JS (no inline `(?i:)` group in Node 20). */
const PIECE_RE =
  /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** GPT-2 `bytes_to_unicode`: byte → printable stand-in character. */
function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCodePoint(cs[i]!)));
  return out;
}

const BYTE_CHAR = bytesToUnicode();
const UTF8 = new TextEncoder();

function byteLevel(piece: string): string {
  let s = "";
  for (const b of UTF8.encode(piece)) s += BYTE_CHAR[b];
  return s;
}

export class DemoTokenizer {
  readonly vocab = new Map<string, number>();
  readonly merges: string[] = [];
  readonly special = new Map<string, number>();
  private maxLen = 1;
  private readonly specialRe: RegExp;
  /** Pieces repeat a lot (template, tool specs, filler sentences): memoise their ids. */
  private readonly pieceCache = new Map<string, number[]>();

  /** `words`: letter runs the text generator uses (each gets a " word" and a "word" entry). */
  constructor(words: Iterable<string>) {
    for (let b = 0; b < 256; b++) this.vocab.set(BYTE_CHAR[b]!, b);
    const pieces = new Set<string>();
    for (const w of words) {
      if (!w) continue;
      pieces.add(byteLevel(w));
      pieces.add(byteLevel(` ${w}`));
    }
    for (const p of [...pieces].sort()) this.addChain(p);
    let id = this.vocab.size;
    for (const s of SPECIAL_TOKENS) this.special.set(s, id++);
    this.specialRe = new RegExp(`(${SPECIAL_TOKENS.map((s) => s.replace(/[|\\/<>]/g, (c) => `\\${c}`)).join("|")})`);
  }

  /** Add `piece` and every prefix of it, each merge being (prefix, next char). */
  private addChain(piece: string): void {
    const chars = [...piece];
    let prefix = chars[0]!;
    for (let i = 1; i < chars.length; i++) {
      const next = prefix + chars[i]!;
      if (!this.vocab.has(next)) {
        this.vocab.set(next, this.vocab.size);
        this.merges.push(`${prefix} ${chars[i]!}`);
      }
      prefix = next;
    }
    if (piece.length > this.maxLen) this.maxLen = piece.length;
  }

  get size(): number {
    return this.vocab.size + this.special.size;
  }

  idOf(special: (typeof SPECIAL_TOKENS)[number]): number {
    return this.special.get(special)!;
  }

  /** Token ids of `text` (special tokens recognised, greedy longest match otherwise). */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const part of text.split(this.specialRe)) {
      if (!part) continue;
      const sp = this.special.get(part);
      if (sp !== undefined) {
        out.push(sp);
        continue;
      }
      for (const m of part.matchAll(PIECE_RE)) {
        let ids = this.pieceCache.get(m[0]);
        if (!ids) {
          ids = this.encodePiece(byteLevel(m[0]));
          if (this.pieceCache.size < 200_000) this.pieceCache.set(m[0], ids);
        }
        for (const id of ids) out.push(id);
      }
    }
    return out;
  }

  /** Greedy longest match; byte-level strings are all BMP, so UTF-16 indexing is per char. */
  private encodePiece(s: string): number[] {
    const out: number[] = [];
    let i = 0;
    while (i < s.length) {
      let took = 1;
      for (let len = Math.min(this.maxLen, s.length - i); len >= 1; len--) {
        const id = this.vocab.get(s.slice(i, i + len));
        if (id !== undefined) {
          out.push(id);
          took = len;
          break;
        }
      }
      i += took;
    }
    return out;
  }

  /** tokenizer.json as Hugging Face `tokenizers` writes it. */
  toJson(): unknown {
    const bl = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
    return {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [...this.special].map(([content, id]) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: !content.startsWith("<t") && !content.startsWith("</t"),
      })),
      normalizer: { type: "NFC" },
      pre_tokenizer: {
        type: "Sequence",
        pretokenizers: [
          { type: "Split", pattern: { Regex: QWEN_SPLIT }, behavior: "Isolated", invert: false },
          bl,
        ],
      },
      post_processor: bl,
      decoder: bl,
      model: {
        type: "BPE",
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: "",
        end_of_word_suffix: "",
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab: Object.fromEntries(this.vocab),
        merges: this.merges,
      },
    };
  }

  /** Write `tokenizer.json`, `tokenizer_config.json` and `special_tokens_map.json` into `dir`. */
  writeTo(dir: string): void {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(this.toJson(), null, 2));
    const decoder: Record<string, unknown> = {};
    for (const [content, id] of this.special) {
      decoder[String(id)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
    }
    fs.writeFileSync(
      path.join(dir, "tokenizer_config.json"),
      JSON.stringify(
        {
          add_bos_token: false,
          add_prefix_space: false,
          added_tokens_decoder: decoder,
          bos_token: null,
          clean_up_tokenization_spaces: false,
          eos_token: "<|im_end|>",
          errors: "replace",
          model_max_length: 40960,
          pad_token: "<|endoftext|>",
          split_special_tokens: false,
          tokenizer_class: "Qwen2Tokenizer",
          unk_token: null,
        },
        null,
        2,
      ),
    );
    fs.writeFileSync(
      path.join(dir, "special_tokens_map.json"),
      JSON.stringify({ eos_token: "<|im_end|>", pad_token: "<|endoftext|>" }, null, 2),
    );
  }
}
