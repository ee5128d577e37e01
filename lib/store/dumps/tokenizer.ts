/**
 * Per-id token text from a Hugging Face `tokenizer/tokenizer.json` (docs/api.md 1.7, 5):
 * each id is decoded ALONE with default options, i.e. `id → token string` (added tokens
 * first, then the model vocabulary) followed by the tokenizer's decoder chain, or a
 * space-join when it has none. Implemented decoders: ByteLevel, Metaspace, WordPiece,
 * BPEDecoder, Replace, ByteFallback, Fuse, Strip, Sequence. An id the vocabulary does not
 * know decodes to "" (the reference skips it). A tokenizer this module cannot read makes
 * `loadTokenizer` return null, and the token view shows ids only.
 */
import path from "node:path";
import { isOutside, type RunFs } from "@/lib/store/safe-fs";

export interface TokenTextDecoder {
  decodeOne(id: number): string;
}

type Json = Record<string, unknown>;
type Chain = (tokens: string[]) => string[];

let BYTE_DECODER: Map<string, number> | null = null;
/** GPT-2 `bytes_to_unicode` inverse: printable stand-in char → byte. */
function byteDecoder(): Map<string, number> {
  if (BYTE_DECODER) return BYTE_DECODER;
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
  BYTE_DECODER = new Map(bs.map((b, i) => [String.fromCodePoint(cs[i] as number), b]));
  return BYTE_DECODER;
}

/** Decoded token texts kept per tokenizer (a 150k vocabulary decoded whole is ~10 MB). */
const DECODED_MAX = 65_536;

const utf8Lossy = (bytes: number[]): string => new TextDecoder("utf-8").decode(new Uint8Array(bytes));

function byteLevel(): Chain {
  return (tokens) => {
    const map = byteDecoder();
    const bytes: number[] = [];
    for (const t of tokens) {
      const mine: number[] = [];
      let ok = true;
      for (const ch of t) {
        const b = map.get(ch);
        if (b === undefined) {
          ok = false;
          break;
        }
        mine.push(b);
      }
      bytes.push(...(ok ? mine : [...new TextEncoder().encode(t)]));
    }
    return [utf8Lossy(bytes)];
  };
}

function metaspace(d: Json): Chain {
  const rep = typeof d.replacement === "string" ? d.replacement : "\u2581";
  const scheme = typeof d.prepend_scheme === "string" ? d.prepend_scheme : d.add_prefix_space === false ? "never" : "always";
  return (tokens) =>
    tokens.map((t, i) => {
      let s = t.split(rep).join(" ");
      if (i === 0 && scheme !== "never" && s.startsWith(" ")) s = s.slice(1);
      return s;
    });
}

function cleanup(s: string): string {
  return s
    .replaceAll(" .", ".")
    .replaceAll(" ?", "?")
    .replaceAll(" !", "!")
    .replaceAll(" ,", ",")
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}

function wordPiece(d: Json): Chain {
  const prefix = typeof d.prefix === "string" ? d.prefix : "##";
  const clean = d.cleanup !== false;
  return (tokens) =>
    tokens.map((t, i) => {
      let s = t;
      if (i !== 0) s = s.startsWith(prefix) ? s.slice(prefix.length) : ` ${s}`;
      return clean ? cleanup(s) : s;
    });
}

function bpeDecoder(d: Json): Chain {
  const suffix = typeof d.suffix === "string" ? d.suffix : "</w>";
  return (tokens) => tokens.map((t, i) => t.split(suffix).join(i === tokens.length - 1 ? "" : " "));
}

function replace(d: Json): Chain {
  const pat = d.pattern as Json | undefined;
  const content = typeof d.content === "string" ? d.content : "";
  if (pat && typeof pat.String === "string") {
    const s = pat.String;
    return (tokens) => tokens.map((t) => t.split(s).join(content));
  }
  if (pat && typeof pat.Regex === "string") {
    const re = new RegExp(pat.Regex, "gu");
    return (tokens) => tokens.map((t) => t.replace(re, content));
  }
  throw new Error("Replace decoder without a pattern");
}

function byteFallback(): Chain {
  return (tokens) => {
    const out: string[] = [];
    let pending: number[] = [];
    const flush = () => {
      if (!pending.length) return;
      try {
        out.push(new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(pending)));
      } catch {
        for (let i = 0; i < pending.length; i++) out.push("\uFFFD");
      }
      pending = [];
    };
    for (const t of tokens) {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
      if (m) pending.push(Number.parseInt(m[1] as string, 16));
      else {
        flush();
        out.push(t);
      }
    }
    flush();
    return out;
  };
}

function strip(d: Json): Chain {
  const content = typeof d.content === "string" ? d.content : " ";
  const start = typeof d.start === "number" ? d.start : 0;
  const stop = typeof d.stop === "number" ? d.stop : 0;
  return (tokens) =>
    tokens.map((t) => {
      const chars = [...t];
      let lo = 0;
      let hi = chars.length;
      while (lo < Math.min(start, chars.length) && chars[lo] === content) lo++;
      let k = 0;
      while (k < stop && hi > lo && chars[hi - 1] === content) {
        hi--;
        k++;
      }
      return chars.slice(lo, hi).join("");
    });
}

function buildChain(d: unknown): Chain | null {
  if (d === null || d === undefined) return null;
  const dec = d as Json;
  switch (dec.type) {
    case "ByteLevel":
      return byteLevel();
    case "Metaspace":
      return metaspace(dec);
    case "WordPiece":
      return wordPiece(dec);
    case "BPEDecoder":
      return bpeDecoder(dec);
    case "Replace":
      return replace(dec);
    case "ByteFallback":
      return byteFallback();
    case "Fuse":
      return (tokens) => [tokens.join("")];
    case "Strip":
      return strip(dec);
    case "Sequence": {
      const parts = (Array.isArray(dec.decoders) ? dec.decoders : []).map((x) => {
        const c = buildChain(x);
        if (!c) throw new Error("empty decoder in Sequence");
        return c;
      });
      return (tokens) => parts.reduce((acc, f) => f(acc), tokens);
    }
    default:
      throw new Error(`unsupported tokenizer decoder ${String(dec.type)}`);
  }
}

/** Build a decoder from parsed `tokenizer.json` (+ optional `tokenizer_config.json`). */
export function tokenizerFromJson(tok: unknown, config: unknown = {}): TokenTextDecoder {
  const t = tok as Json;
  const model = (t.model ?? {}) as Json;
  const idToToken = new Map<number, string>();
  const vocab = model.vocab;
  if (Array.isArray(vocab)) {
    (vocab as unknown[]).forEach((entry, id) => {
      const piece: unknown = Array.isArray(entry) ? entry[0] : entry;
      if (typeof piece === "string") idToToken.set(id, piece);
    });
  } else if (vocab && typeof vocab === "object") {
    for (const [token, id] of Object.entries(vocab as Record<string, unknown>)) {
      if (typeof id === "number") idToToken.set(id, token);
    }
  } else {
    throw new Error("tokenizer.json has no model vocabulary");
  }
  for (const a of Array.isArray(t.added_tokens) ? t.added_tokens : []) {
    const { id, content } = a as Json;
    if (typeof id === "number" && typeof content === "string") idToToken.set(id, content);
  }
  const chain = buildChain(t.decoder);
  const clean = (config as Json | null)?.clean_up_tokenization_spaces === true;
  // One id always decodes to the same text: each is decoded once (a token window repeats
  // the same few thousand ids; at most DECODED_MAX texts are kept).
  const decoded = new Map<number, string>();
  return {
    decodeOne(id: number): string {
      const hit = decoded.get(id);
      if (hit !== undefined) return hit;
      const token = idToToken.get(id);
      const tokens = token === undefined ? [] : [token];
      const raw = chain ? chain(tokens).join("") : tokens.join(" ");
      const text = clean ? cleanup(raw) : raw;
      if (decoded.size < DECODED_MAX) decoded.set(id, text);
      return text;
    },
  };
}

/**
 * Load `tokenizer/tokenizer.json` of a run; null when the directory or file is missing,
 * resolves outside the run directory (safe-fs.ts), or is unsupported.
 */
export async function loadTokenizer(fsys: RunFs, relDir = "tokenizer"): Promise<TokenTextDecoder | null> {
  let raw: string;
  try {
    raw = (await fsys.readFile(path.posix.join(relDir, "tokenizer.json"))).toString("utf8");
  } catch (err) {
    if (isOutside(err)) fsys.warnOnce(`${relDir}/tokenizer.json`, "points outside the run directory; showing token ids only");
    return null;
  }
  let config: unknown = {};
  try {
    config = JSON.parse((await fsys.readFile(path.posix.join(relDir, "tokenizer_config.json"))).toString("utf8"));
  } catch {
    // optional (absent, outside the run directory, or unreadable)
  }
  try {
    return tokenizerFromJson(JSON.parse(raw), config);
  } catch (err) {
    // Names only: a JSON error message may quote the file's bytes.
    const what = err instanceof SyntaxError ? "is not valid JSON" : "is not a supported tokenizer";
    fsys.warnOnce(`${relDir}/tokenizer.json`, `${what}; showing token ids only`);
    return null;
  }
}
