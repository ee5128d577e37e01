/**
 * JSON as Python's `json.dumps` writes it: bare `NaN`, `Infinity` and `-Infinity` are
 * allowed where a number may stand (docs/formats.md 9). The fast path is `JSON.parse`;
 * only on failure do we rewrite those tokens — outside string literals — into marker
 * strings that a reviver turns back into numbers.
 */
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
