/**
 * Full-text search over the prompts, responses and tool calls of a range of steps
 * (docs/api.md 9.2 `GET /api/rollout/search`). The text of a sample is its conversation
 * sidecar record when the step has one (prompt, every message's content and reasoning,
 * each tool call's name and arguments), else the rollout dump's `prompt` and `response`.
 *
 * Bounded work: at most `MAX_STEPS` steps, the first `MAX_HITS` hits are returned with the
 * total count (counting stops at `MAX_COUNT`), each text is scanned up to
 * `MAX_TEXT_CHARS`, and the whole search stops after `TIME_BUDGET_MS` (`truncated`). A
 * regex is compiled case-insensitively; an invalid one is a 422 naming the reason.
 *
 * The budget also holds inside one match: a user's pattern can backtrack for hours on one
 * text (`(\w+\s?)+$` against 40 words and a "!"), and a regular expression cannot be
 * interrupted by the code that runs it. Each step's matching runs under `node:vm`'s
 * timeout, which stops the isolate's running code — a regular expression included — when
 * the budget is spent; the search then answers what it found, `truncated`.
 */
import vm from "node:vm";
import { unprocessable } from "@/lib/contracts/errors";

export const SEARCH_LIMITS = { MAX_STEPS: 64, MAX_HITS: 200, MAX_COUNT: 100_000, MAX_TEXT_CHARS: 1_000_000, TIME_BUDGET_MS: 2_000, SNIPPET: 48 };

export type SearchField = "prompt" | "response" | "tool_call" | "reasoning";

export interface SearchHit {
  field: SearchField;
  /** Message index in the conversation (null: the dump's prompt/response strings). */
  message: number | null;
  offset: number;
  length: number;
  /** Text around the hit; the hit is `snippet.slice(pre, pre + length)`. */
  snippet: string;
  pre: number;
}

export interface SearchSample {
  rollout_id: number;
  sample_index: number;
  hits: SearchHit[];
}

export interface SearchAnswer {
  q: string;
  regex: boolean;
  steps: number[];
  total: number;
  /** true when `total` is a lower bound (count cap or time budget reached). */
  truncated: boolean;
  returned: number;
  samples: SearchSample[];
}

export interface SearchText {
  field: SearchField;
  message: number | null;
  text: string;
}

/** What search needs from the dump reader. */
export interface SearchDumps {
  listRolloutIds(): Promise<{ train: number[]; eval: number[] }>;
  sidecarRows(rolloutId: number, evaluation: boolean): Promise<ReadonlyMap<number | null, Record<string, unknown>> | null>;
  sampleRecords(rolloutId: number, evaluation: boolean): Promise<readonly { index: number | null; prompt: unknown; response?: string | null }[]>;
}

function contentText(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map((p) => (typeof p === "string" ? p : typeof p === "object" && p !== null && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join("");
  return "";
}

function get(o: unknown, k: string): unknown {
  if (o instanceof Map) return o.get(k);
  return typeof o === "object" && o !== null ? (o as Record<string, unknown>)[k] : undefined;
}

/** The searchable texts of one conversation (sidecar `messages`, or a prompt message list). */
export function conversationTexts(prompt: unknown, messages: unknown): SearchText[] {
  const out: SearchText[] = [];
  const msgs = Array.isArray(messages) ? messages : Array.isArray(prompt) ? prompt : null;
  if (msgs === null) {
    if (typeof prompt === "string") out.push({ field: "prompt", message: null, text: prompt });
    return out;
  }
  if (typeof prompt === "string" && Array.isArray(messages)) out.push({ field: "prompt", message: null, text: prompt });
  msgs.forEach((m: unknown, i: number) => {
    const role = get(m, "role");
    const field: SearchField = role === "assistant" ? "response" : role === "tool" ? "tool_call" : "prompt";
    const c = contentText(get(m, "content"));
    if (c) out.push({ field, message: i, text: c });
    const r = get(m, "reasoning_content");
    if (typeof r === "string" && r) out.push({ field: "reasoning", message: i, text: r });
    const calls = get(m, "tool_calls");
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const fn = get(call, "function");
        const name = get(fn, "name");
        const args = get(fn, "arguments");
        const t = `${typeof name === "string" ? name : ""}(${typeof args === "string" ? args : args === undefined ? "" : JSON.stringify(args)})`;
        out.push({ field: "tool_call", message: i, text: t });
      }
    }
  });
  return out;
}

export function compileQuery(q: string, regex: boolean): RegExp {
  const src = regex ? q : q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  try {
    return new RegExp(src, "gi");
  } catch (err) {
    throw unprocessable([
      { type: "value_error", loc: ["query", "q"], msg: `invalid regular expression: ${err instanceof Error ? err.message : String(err)}`, input: q },
    ]);
  }
}

const GUARD = new vm.Script("run()");
const guardContext = vm.createContext({ run: (): void => undefined });

/**
 * Runs `fn` and stops it after `ms` (whatever it is doing: a regular expression's
 * backtracking included); true if it finished. What it changed until then stays changed.
 * One context, reused: creating one costs more than a step's matching (~80 µs a call).
 */
export function runWithin(fn: () => void, ms: number): boolean {
  guardContext.run = fn;
  try {
    GUARD.runInContext(guardContext, { timeout: Math.max(1, Math.ceil(ms)) });
    return true;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return false;
    throw err;
  } finally {
    guardContext.run = (): void => undefined;
  }
}

/** Steps of `a-b` (or `a`) that exist, ascending; at most MAX_STEPS (the newest). */
export function pickSteps(available: readonly number[], range: { lo: number; hi: number } | null): number[] {
  const inRange = range ? available.filter((r) => r >= range.lo && r <= range.hi) : available.slice(-1);
  return inRange.slice(-SEARCH_LIMITS.MAX_STEPS);
}

export async function searchRollouts(
  dumps: SearchDumps,
  opts: { q: string; regex: boolean; range: { lo: number; hi: number } | null; evaluation?: boolean },
): Promise<SearchAnswer> {
  const re = compileQuery(opts.q, opts.regex);
  const evaluation = opts.evaluation ?? false;
  const ids = await dumps.listRolloutIds();
  const steps = pickSteps(evaluation ? ids.eval : ids.train, opts.range);
  const t0 = Date.now();
  const L = SEARCH_LIMITS;
  let total = 0;
  let returned = 0;
  let truncated = false;
  const samples: SearchSample[] = [];
  for (const rolloutId of steps) {
    const side = await dumps.sidecarRows(rolloutId, evaluation);
    const units: { si: number; texts: SearchText[] }[] = [];
    if (side) {
      // The sidecar holds every recorded conversation: the .pt is not opened.
      for (const [si, row] of side) if (si !== null) units.push({ si, texts: conversationTexts(row.prompt, row.messages) });
      units.sort((a, b) => a.si - b.si);
    } else {
      for (const s of await dumps.sampleRecords(rolloutId, evaluation)) {
        if (s.index === null) continue;
        const texts = conversationTexts(s.prompt, null);
        if (typeof s.response === "string" && s.response) texts.push({ field: "response", message: null, text: s.response });
        units.push({ si: s.index, texts });
      }
    }
    const left = L.TIME_BUDGET_MS - (Date.now() - t0);
    if (left <= 0) {
      truncated = true;
      break;
    }
    let stop = false;
    const finished = runWithin(() => {
      stop = matchUnits(rolloutId, units);
    }, left);
    if (!finished) {
      // Stopped anywhere in `matchUnits`: the counts are made to agree with the hits kept.
      returned = 0;
      for (const sm of samples) returned += sm.hits.length;
      total = Math.max(total, returned);
    }
    if (!finished || stop) {
      truncated = true;
      break;
    }
  }
  return { q: opts.q, regex: opts.regex, steps, total, truncated, returned, samples };

  /** One step's matching; true when the count cap or the time budget stops the search. */
  function matchUnits(rolloutId: number, units: readonly { si: number; texts: SearchText[] }[]): boolean {
    for (const u of units) {
      if (Date.now() - t0 > L.TIME_BUDGET_MS) return true;
      let entry: SearchSample | null = null;
      for (const t of u.texts) {
        const text = t.text.length > L.MAX_TEXT_CHARS ? t.text.slice(0, L.MAX_TEXT_CHARS) : t.text;
        re.lastIndex = 0;
        let m: RegExpExecArray | null;
        while ((m = re.exec(text)) !== null) {
          if (m[0].length === 0) {
            re.lastIndex++;
            continue;
          }
          total++;
          if (returned < L.MAX_HITS) {
            const pre = Math.min(L.SNIPPET, m.index);
            const hit: SearchHit = {
              field: t.field,
              message: t.message,
              offset: m.index,
              length: m[0].length,
              snippet: text.slice(m.index - pre, m.index + m[0].length + L.SNIPPET),
              pre,
            };
            if (!entry) samples.push((entry = { rollout_id: rolloutId, sample_index: u.si, hits: [] }));
            entry.hits.push(hit);
            returned++;
          }
          if (total >= L.MAX_COUNT) return true;
        }
      }
    }
    return false;
  }
}
