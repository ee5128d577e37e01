/**
 * Python-compatible JSON: byte-exact `json.dumps` output and a tolerant reader.
 *
 * Policy (docs/formats.md §2): every telemetry file must look exactly like what
 * Python's `json.dumps(obj)` writes with its defaults (`ensure_ascii=True`,
 * `allow_nan=True`):
 *   - floats use Python's `repr` (shortest round-trip digits, fixed notation
 *     for decimal exponents -4..15 with at least one fractional digit,
 *     otherwise `1e-05` / `1e+16` style), `NaN` / `Infinity` / `-Infinity`
 *     as bare tokens;
 *   - ints are plain decimal digits;
 *   - strings are ASCII-only: `\uXXXX` (lowercase hex) for everything outside
 *     0x20..0x7E, the five short escapes, `\"` and `\\`.
 *
 * JS numbers carry no int/float distinction, so the *caller* decides:
 *   - fixed record fields are formatted by per-record serializers that know
 *     which fields are floats (see serialize.ts);
 *   - free-form values (metric dicts, meta args) follow one rule: a
 *     non-integral number (or NaN/±Inf) is a float, an integral `number` is an
 *     int, and an integral float must be wrapped with `pyFloat(x)`.
 *     `parsePyJson` produces exactly that representation, so parse → dump
 *     round-trips Python output byte for byte.
 *   - free-form objects keep insertion order; JS would reorder integer-like
 *     keys ("0", "12") first, so such objects are represented as `Map`s.
 */

/** Marks an integral-valued number as a Python float (`95.0`, not `95`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** Tag a number as float for free-form values; non-integral numbers need no tag. */
export function pyFloat(value: number): PyFloat {
  return new PyFloat(value);
}

export type PyValue =
  | null
  | boolean
  | number
  | string
  | PyFloat
  | readonly PyValue[]
  | ReadonlyMap<string, PyValue>
  | { readonly [key: string]: PyValue };

// ---------------------------------------------------------------------------
// numbers

/** Python `repr(float(x))`. */
export function formatFloat(x: number): string {
  if (x !== x) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // Fast path (timestamps, most values): for 1e-4 <= |x| < 1e16 the shortest
  // digits have decimal exponent -4..15, where both Python and JS print fixed
  // notation. (A double below 1e16 never has "1e16" as its shortest repr,
  // since 1e16 is itself a double; the same holds at the 1e-4 boundary.)
  const ax = x < 0 ? -x : x;
  if (ax >= 1e-4 && ax < 1e16) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const exp = x.toExponential(); // shortest round-trip digits, e.g. "1.5e-7"
  const at = exp.indexOf("e");
  const e = Number(exp.slice(at + 1));
  if (e >= -4 && e <= 15) {
    // JS uses fixed notation for every exponent in this range as well.
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const sign = exp.charCodeAt(at + 1) === 45 /* - */ ? "-" : "+";
  const digits = exp.slice(at + 2);
  return `${exp.slice(0, at)}e${sign}${digits.length < 2 ? `0${digits}` : digits}`;
}

/** Python `repr(int(x))` for an integral JS number. */
export function formatInt(x: number): string {
  if (Number.isSafeInteger(x)) return String(x);
  if (Number.isInteger(x)) return BigInt(x).toString(); // no exponent for huge ints
  throw new TypeError(`not an integer: ${x}`);
}

// ---------------------------------------------------------------------------
// strings

// Printable ASCII except `"` and `\`: the common case needs no escaping.
const PLAIN_ASCII = /^[ !#-[\]-~]*$/;
const SHORT_ESCAPES: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };

/** Python `json.dumps(s)` with `ensure_ascii=True`, quotes included. */
export function formatString(s: string): string {
  if (PLAIN_ASCII.test(s)) return `"${s}"`;
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f && c !== 34 && c !== 92) continue;
    if (i > start) out += s.slice(start, i);
    out += SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, "0")}`;
    start = i + 1;
  }
  return `${out}${s.slice(start)}"`;
}

// ---------------------------------------------------------------------------
// generic dump (free-form values)

function isMap(v: unknown): v is ReadonlyMap<string, PyValue> {
  return v instanceof Map;
}

function scalar(v: PyValue): string | undefined {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return Number.isInteger(v) ? formatInt(v) : formatFloat(v);
    case "string":
      return formatString(v);
    default:
      return v instanceof PyFloat ? formatFloat(v.value) : undefined;
  }
}

function entriesOf(v: ReadonlyMap<string, PyValue> | { readonly [key: string]: PyValue }): Iterable<[string, PyValue]> {
  return isMap(v) ? v.entries() : Object.entries(v);
}

/**
 * `json.dumps(v, separators=(itemSep, keySep))` — compact (",", ":") is the
 * JSONL form, (", ", ": ") the Python default used by lane_catalog.json.
 */
export function dumpPy(v: PyValue, itemSep = ",", keySep = ":"): string {
  const s = scalar(v);
  if (s !== undefined) return s;
  if (Array.isArray(v)) {
    return `[${(v as readonly PyValue[]).map((x) => dumpPy(x, itemSep, keySep)).join(itemSep)}]`;
  }
  const parts: string[] = [];
  for (const [k, x] of entriesOf(v as ReadonlyMap<string, PyValue>)) {
    parts.push(`${formatString(k)}${keySep}${dumpPy(x, itemSep, keySep)}`);
  }
  return `{${parts.join(itemSep)}}`;
}

/** `json.dumps(v, indent=1)`: the meta.json layout (no trailing newline). */
export function dumpPyIndent1(v: PyValue, level = 0): string {
  const s = scalar(v);
  if (s !== undefined) return s;
  const inner = "\n" + " ".repeat(level + 1);
  const close = "\n" + " ".repeat(level);
  if (Array.isArray(v)) {
    const items = v as readonly PyValue[];
    if (items.length === 0) return "[]";
    return `[${inner}${items.map((x) => dumpPyIndent1(x, level + 1)).join(`,${inner}`)}${close}]`;
  }
  const parts: string[] = [];
  for (const [k, x] of entriesOf(v as ReadonlyMap<string, PyValue>)) {
    parts.push(`${formatString(k)}: ${dumpPyIndent1(x, level + 1)}`);
  }
  if (parts.length === 0) return "{}";
  return `{${inner}${parts.join(`,${inner}`)}${close}}`;
}

// ---------------------------------------------------------------------------
// tolerant parse (Python json.loads semantics)

export class PyJsonSyntaxError extends SyntaxError {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
  }
}

const ARRAY_INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * Parse Python-written JSON: accepts `NaN`, `Infinity`, `-Infinity`; returns
 * integral float tokens (`95.0`, `1e+16`) as `PyFloat`; objects with
 * integer-like keys as `Map` so their key order survives.
 */
export function parsePyJson(text: string): PyValue {
  const p = new Parser(text);
  p.ws();
  const v = p.value();
  p.ws();
  if (p.i < text.length) p.fail("unexpected trailing data");
  return v;
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  fail(msg: string): never {
    throw new PyJsonSyntaxError(msg, this.i);
  }

  ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.i = i;
  }

  value(): PyValue {
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 123 /* { */:
        return this.object();
      case 91 /* [ */:
        return this.array();
      case 34 /* " */:
        return this.string();
      case 116 /* t */:
        return this.literal("true", true);
      case 102 /* f */:
        return this.literal("false", false);
      case 110 /* n */:
        return this.literal("null", null);
      case 78 /* N */:
        return this.literal("NaN", NaN);
      case 73 /* I */:
        return this.literal("Infinity", Infinity);
      default:
        if (c === 45 /* - */ && this.s.startsWith("-Infinity", this.i)) return this.literal("-Infinity", -Infinity);
        if (c === 45 || (c >= 48 && c <= 57)) return this.number();
        return this.fail("unexpected character");
    }
  }

  literal<T extends PyValue>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail("invalid literal");
    this.i += word.length;
    return v;
  }

  number(): number | PyFloat {
    const s = this.s;
    const start = this.i;
    let i = start;
    if (s.charCodeAt(i) === 45) i++;
    const intStart = i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    if (i === intStart) {
      this.i = i;
      this.fail("invalid number");
    }
    let isFloat = false;
    if (s.charCodeAt(i) === 46 /* . */) {
      isFloat = true;
      i++;
      const fracStart = i;
      while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
      if (i === fracStart) {
        this.i = i;
        this.fail("invalid number");
      }
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69 /* e E */) {
      isFloat = true;
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      const expStart = i;
      while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
      if (i === expStart) {
        this.i = i;
        this.fail("invalid number");
      }
    }
    this.i = i;
    const v = Number(s.slice(start, i));
    // Non-integral floats are self-describing; only integral ones need the tag.
    return isFloat && Number.isInteger(v) ? new PyFloat(v) : v;
  }

  string(): string {
    const s = this.s;
    const start = ++this.i;
    // Fast path: no escapes before the closing quote.
    let i = start;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === 92 || c < 0x20 || i >= s.length) break;
      i++;
    }
    let out = s.slice(start, i);
    for (;;) {
      if (i >= s.length) {
        this.i = i;
        this.fail("unterminated string");
      }
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return out;
      }
      if (c < 0x20) {
        this.i = i;
        this.fail("control character in string");
      }
      if (c !== 92) {
        out += s[i];
        i++;
        continue;
      }
      const esc = s[i + 1];
      i += 2;
      switch (esc) {
        case '"':
        case "\\":
        case "/":
          out += esc;
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const hex = s.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.i = i;
            this.fail("invalid \\u escape");
          }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.i = i - 1;
          this.fail("invalid escape");
      }
    }
  }

  array(): PyValue[] {
    this.i++;
    const out: PyValue[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 93) {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 93) return out;
      if (c !== 44) {
        this.i--;
        this.fail("expected ',' or ']'");
      }
    }
  }

  object(): PyValue {
    this.i++;
    const keys: string[] = [];
    const vals: PyValue[] = [];
    let indexLike = false;
    this.ws();
    if (this.s.charCodeAt(this.i) === 125) {
      this.i++;
      return {};
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.i) !== 34) this.fail("expected string key");
      const k = this.string();
      if (!indexLike && ARRAY_INDEX_KEY.test(k) && Number(k) < 4294967295) indexLike = true;
      this.ws();
      if (this.s.charCodeAt(this.i) !== 58) this.fail("expected ':'");
      this.i++;
      this.ws();
      keys.push(k);
      vals.push(this.value());
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 125) break;
      if (c !== 44) {
        this.i--;
        this.fail("expected ',' or '}'");
      }
    }
    if (indexLike) {
      const m = new Map<string, PyValue>();
      keys.forEach((k, j) => m.set(k, vals[j] as PyValue));
      return m;
    }
    const o: Record<string, PyValue> = {};
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j] as string;
      // `__proto__` must become an own property, not the prototype.
      if (k === "__proto__") Object.defineProperty(o, k, { value: vals[j], enumerable: true, writable: true, configurable: true });
      else o[k] = vals[j] as PyValue;
    }
    return o;
  }
}

// ---------------------------------------------------------------------------------------
// Plain-value mode of the same tolerant reader, for the read side: JSON as Python's
// `json.dumps` writes it, bare `NaN`, `Infinity` and `-Infinity` allowed where a number may
// stand (docs/formats.md 9), numbers as plain JS numbers (no `PyFloat` tags, no `Map`s).
// The fast path is `JSON.parse`; only on failure are those tokens — outside string
// literals — rewritten into marker strings that a reviver turns back into numbers.

const MARK = "\u0000rlboard-nonfinite:";
const VALUES: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const rewritten = rewriteNonFinite(text);
    if (rewritten === text) throw err;
    return JSON.parse(rewritten, (_k, v: unknown) =>
      typeof v === "string" && v.startsWith(MARK) ? VALUES[v.slice(MARK.length)] : v,
    );
  }
}

function rewriteNonFinite(text: string): string {
  let out = "";
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped char
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    for (const tok of ["-Infinity", "Infinity", "NaN"]) {
      if (text.startsWith(tok, i)) {
        out += text.slice(last, i) + JSON.stringify(MARK + tok);
        i += tok.length - 1;
        last = i + 1;
        break;
      }
    }
  }
  return last === 0 ? text : out + text.slice(last);
}
