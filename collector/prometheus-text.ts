/**
 * A small parser for the Prometheus text exposition format (what SGLang's
 * `/metrics` and the router's `/engine_metrics` serve), plus the matching
 * label escaping for our own `/metrics` output.
 *
 * Accepts HELP/TYPE/other comments, blank lines, label sets with `\\`, `\"`
 * and `\n` escapes and an optional trailing comma, values such as `61`,
 * `2.5e+07`, `NaN`, `+Inf`, `-Inf`, and an optional trailing timestamp (which
 * is ignored: the scraper stamps its own tick time). A malformed sample line
 * throws, because a half-understood body must leave a gap, not wrong data.
 */

export interface PromSample {
  /** Sample name as written (`sglang:num_running_reqs`, `..._bucket`, `..._sum`). */
  name: string;
  /** Labels in text order. */
  labels: [string, string][];
  value: number;
}

export class PromParseError extends Error {}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

export function parsePromValue(token: string): number {
  switch (token) {
    case "NaN":
      return NaN;
    case "+Inf":
    case "Inf":
      return Infinity;
    case "-Inf":
      return -Infinity;
  }
  if (!NUMBER.test(token)) throw new PromParseError(`invalid sample value ${JSON.stringify(token)}`);
  return Number(token);
}

/**
 * Parse `text`; when `accept` is given, sample lines whose name it rejects are
 * skipped before their labels are parsed (most of an SGLang body is buckets).
 */
export function parsePromText(text: string, accept?: (name: string) => boolean): PromSample[] {
  const out: PromSample[] = [];
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end);
    pos = end + 1;
    lineNo++;
    const first = line.charCodeAt(0);
    if (line.length === 0 || first === 35 /* # */) continue;
    try {
      const s = parseLine(line, accept);
      if (s) out.push(s);
    } catch (e) {
      if (e instanceof PromParseError) throw new PromParseError(`line ${lineNo}: ${e.message}`);
      throw e;
    }
  }
  return out;
}

function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 58;
}

function parseLine(line: string, accept?: (name: string) => boolean): PromSample | undefined {
  let i = 0;
  while (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9) i++;
  if (i === line.length) return undefined; // whitespace-only line
  const nameStart = i;
  while (i < line.length && isNameChar(line.charCodeAt(i))) i++;
  if (i === nameStart) throw new PromParseError("expected a metric name");
  const name = line.slice(nameStart, i);
  if (accept && !accept(name)) return undefined;
  const labels: [string, string][] = [];
  if (line.charCodeAt(i) === 123 /* { */) {
    i++;
    for (;;) {
      while (line.charCodeAt(i) === 32) i++;
      if (line.charCodeAt(i) === 125 /* } */) {
        i++;
        break;
      }
      const kStart = i;
      while (i < line.length && isNameChar(line.charCodeAt(i))) i++;
      if (i === kStart) throw new PromParseError("expected a label name");
      const key = line.slice(kStart, i);
      while (line.charCodeAt(i) === 32) i++;
      if (line.charCodeAt(i) !== 61 /* = */) throw new PromParseError(`expected '=' after label ${key}`);
      i++;
      while (line.charCodeAt(i) === 32) i++;
      if (line.charCodeAt(i) !== 34) throw new PromParseError(`expected '"' for label ${key}`);
      i++;
      let value = "";
      let segStart = i;
      for (;;) {
        if (i >= line.length) throw new PromParseError("unterminated label value");
        const c = line.charCodeAt(i);
        if (c === 34) break;
        if (c === 92 /* \ */) {
          value += line.slice(segStart, i);
          const esc = line[i + 1];
          value += esc === "n" ? "\n" : esc === "\\" ? "\\" : esc === '"' ? '"' : `\\${esc ?? ""}`;
          i += 2;
          segStart = i;
          continue;
        }
        i++;
      }
      value += line.slice(segStart, i);
      i++;
      labels.push([key, value]);
      while (line.charCodeAt(i) === 32) i++;
      const c = line.charCodeAt(i);
      if (c === 44 /* , */) i++;
      else if (c !== 125) throw new PromParseError("expected ',' or '}' in label set");
    }
  }
  const rest = line.slice(i).trim().split(/[ \t]+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === "") throw new PromParseError("expected a value");
  return { name, labels, value: parsePromValue(rest[0] as string) };
}

/** Escape a label value for exposition output. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Format a value for exposition output. */
export function formatPromValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}
