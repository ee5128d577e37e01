import { isNumberRun, numbersText } from "@/lib/api/number-text";

/**
 * The one JSON serializer for API answers. JSON cannot carry NaN/±Infinity: every
 * non-finite number becomes `null` (docs/api.md 9.1) — JSON.stringify already does that
 * for numbers, recursively, so the only thing added here is that typed arrays serialise
 * as plain arrays (their NaN elements also become null).
 *
 * Speed matters: a 32-lane timeline answer is several MB. A JSON.stringify replacer is
 * called for every number and takes V8 off its fast path (3× slower), so typed arrays
 * are converted by a walk that only visits objects.
 */
export function jsonSafeStringify(value: unknown): string {
  return JSON.stringify(plain(value));
}

/** Typed arrays → arrays, copying only the objects on the path to one. */
function plain(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (ArrayBuffer.isView(v)) return v instanceof DataView ? v : Array.from(v as unknown as ArrayLike<number | bigint>, Number);
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x !== "object" || x === null) continue;
      const y = plain(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === "function" || v instanceof Map || v instanceof Set) return v;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (typeof x !== "object" || x === null) continue;
    const y = plain(x);
    if (y !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = y;
  }
  return out ?? v;
}

export function jsonResponse(value: unknown, init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  return new Response(jsonSafeStringify(value), { ...init, headers });
}

/**
 * The same text as `jsonSafeStringify`, produced in slices with a turn of the event loop
 * whenever about `sliceMs` of work has been done. Heavy answers are several MB (a 32-lane
 * GPU window, 64 lanes of phases): serialised in one call they hold the event loop for
 * 100+ ms, and every light request behind them waits (docs/api.md 9.4). Objects and arrays
 * down to `depth` levels are written member by member (arrays in runs of elements); what
 * is below is one `JSON.stringify` call each.
 */
export async function jsonSafeStringifyAsync(value: unknown, sliceMs = 8, depth = 3): Promise<string> {
  return (await jsonPiecesAsync(value, sliceMs, depth)).join("");
}

/** The text of `jsonSafeStringifyAsync` as the pieces it is written in (joined, the same text). */
async function jsonPiecesAsync(value: unknown, sliceMs = 8, depth = 3): Promise<string[]> {
  const parts: string[] = [];
  // Most answers are small: written in one go, no awaits (an awaited call per member costs
  // more than the whole text — a 0.3 MB trajectories answer took 20 ms sliced, 3 ms native).
  if (sliceMs > 0 && nodesUpTo(value, NATIVE_NODES) <= NATIVE_NODES) {
    writeSync(value, parts, false);
    return parts;
  }
  let since = performance.now();
  const tick = async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
  const ARRAY_RUN = 1024;
  // Typed arrays are converted (`plain`) where each piece is written, so the conversion is
  // sliced too; runs of flat elements (primitives, or objects of primitives — a phase
  // interval, a table row) go through one native JSON.stringify call per run.
  const write = async (p: unknown, level: number, inArray: boolean): Promise<void> => {
    if (isNumberRun(p) && p.length > NUMBER_RUN) {
      parts.push("[");
      for (let i = 0; i < p.length; i += NUMBER_RUN) {
        if (i > 0) parts.push(",");
        parts.push(numbersJson(p, i, Math.min(p.length, i + NUMBER_RUN)));
        await tick();
      }
      parts.push("]");
      return;
    }
    if (level >= depth || typeof p !== "object" || p === null || ArrayBuffer.isView(p) || (sliceMs > 0 && nodesUpTo(p, NATIVE_NODES) <= NATIVE_NODES)) {
      writeSync(p, parts, inArray);
      return;
    }
    if (Array.isArray(p)) {
      parts.push("[");
      for (let i = 0; i < p.length; i += ARRAY_RUN) {
        if (i > 0) parts.push(",");
        const run = p.slice(i, i + ARRAY_RUN);
        if (run.every(isFlat)) {
          parts.push(JSON.stringify(plain(run)).slice(1, -1));
        } else if (level + 1 >= depth || (sliceMs > 0 && nodesUpTo(run, NATIVE_NODES) <= NATIVE_NODES)) {
          for (let j = 0; j < run.length; j++) {
            if (j > 0) parts.push(",");
            writeSync(run[j], parts, true);
          }
        } else {
          for (let j = 0; j < run.length; j++) {
            if (j > 0) parts.push(",");
            await write(run[j], level + 1, true);
          }
        }
        await tick();
      }
      parts.push("]");
      return;
    }
    if (!isPlainObject(p)) {
      parts.push(JSON.stringify(plain(p)));
      return;
    }
    parts.push("{");
    for (const [k, x] of jsonMembers(p)) {
      parts.push(k, ":");
      await write(x, level + 1, false);
      await tick();
    }
    parts.push("}");
  };
  await write(value, 0, false);
  return parts;
}

/**
 * Below this many values (typed-array elements count one each) a subtree is written without
 * a turn of the event loop (`writeSync`): a few ms at most, within one slice.
 */
const NATIVE_NODES = 50_000;

/** Numbers of a longer run are written in slices of this many (~1 ms each). */
const NUMBER_RUN = 16_384;
/** Shorter runs of numbers go through JSON.stringify (one call beats the writer's setup). */
const NUMBER_RUN_MIN = 32;
/** Arrays of containers up to this long are walked member by member; longer ones are written natively. */
const WALK_MAX = 256;

/**
 * `value`'s JSON text (as `jsonSafeStringify` writes it) appended to `parts` without
 * yielding: plain objects, and short arrays of containers, are walked so that each run of
 * numbers they hold is written by `numbersText` (a series' timestamps: ~2.7× faster than
 * JSON.stringify, lib/api/number-text.ts); everything else is one native call.
 */
function writeSync(p: unknown, parts: string[], inArray: boolean): void {
  if (isNumberRun(p) && p.length >= NUMBER_RUN_MIN) {
    const text = numbersText(p);
    if (text !== null) parts.push("[", text, "]");
    else parts.push(JSON.stringify(plain(p)));
    return;
  }
  if (typeof p === "object" && p !== null && !ArrayBuffer.isView(p)) {
    if (Array.isArray(p)) {
      if (p.length <= WALK_MAX && !p.every(isFlat)) {
        parts.push("[");
        for (let i = 0; i < p.length; i++) {
          if (i > 0) parts.push(",");
          writeSync(p[i], parts, true);
        }
        parts.push("]");
        return;
      }
    } else if (isPlainObject(p)) {
      parts.push("{");
      for (const [k, x] of jsonMembers(p)) {
        parts.push(k, ":");
        writeSync(x, parts, false);
      }
      parts.push("}");
      return;
    }
  }
  const s = JSON.stringify(plain(p));
  parts.push(s === undefined ? (inArray ? "null" : "") : s);
}

/** `values[from..to)` as JSON numbers joined by commas (an element that is not a number: JSON.stringify's text for the run). */
function numbersJson(values: ArrayLike<number>, from: number, to: number): string {
  return numbersText(values, from, to) ?? JSON.stringify(plain(Array.prototype.slice.call(values, from, to))).slice(1, -1);
}

/**
 * The members JSON.stringify writes of a plain object, in its order: the key as JSON text
 * (a comma before every one but the first), and the value; undefined, functions and
 * symbols are left out.
 */
function jsonMembers(p: object): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const k of Object.keys(p)) {
    const x = (p as Record<string, unknown>)[k];
    if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
    out.push([(out.length > 0 ? "," : "") + JSON.stringify(k), x]);
  }
  return out;
}

/** An object JSON.stringify writes member by member: no class, no toJSON. */
function isPlainObject(x: object): boolean {
  const proto = Object.getPrototypeOf(x) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (x as { toJSON?: unknown }).toJSON !== "function";
}

/** Values in `v` counted up to a little past `limit` (stops early: the cost is bounded by the limit). */
function nodesUpTo(v: unknown, limit: number): number {
  let n = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0 && n <= limit) {
    const x = stack.pop();
    n++;
    if (typeof x !== "object" || x === null) continue;
    if (ArrayBuffer.isView(x)) {
      n += x instanceof DataView ? 1 : (x as unknown as ArrayLike<unknown>).length;
      continue;
    }
    if (Array.isArray(x)) {
      // A series column (numbers end to end) counts by its length: visiting each element
      // cost more than the native write it decides on (a 3.5 MB GPU answer: 26 of 94 ms).
      // The count only picks slice sizes, so an array with objects in its middle only
      // makes a slice larger than planned.
      const first: unknown = x[0];
      const last: unknown = x[x.length - 1];
      if ((typeof first !== "object" || first === null) && (typeof last !== "object" || last === null)) {
        n += x.length;
        continue;
      }
      for (let i = 0; i < x.length && n <= limit; i++) {
        const y: unknown = x[i];
        if (typeof y === "object" && y !== null) stack.push(y);
        else n++;
      }
      continue;
    }
    for (const k in x) {
      const y = (x as Record<string, unknown>)[k];
      if (typeof y === "object" && y !== null) stack.push(y);
      else n++;
      if (n > limit) break;
    }
  }
  return n;
}

/** A primitive, or a plain object whose values are all primitives. */
function isFlat(x: unknown): boolean {
  if (typeof x !== "object" || x === null) return true;
  if (Array.isArray(x) || ArrayBuffer.isView(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in x) {
    const v = (x as Record<string, unknown>)[k];
    if (typeof v === "object" && v !== null) return false;
  }
  return true;
}

/**
 * `jsonResponse` for heavy answers: serialised in slices (`jsonSafeStringifyAsync`).
 *
 * An answer of NO_TRANSFORM_MIN_CHARS or more is marked `Cache-Control: no-transform`, which
 * Next's response compression honours where it is on (`--compress`; off by default on a
 * loopback address, docs/deploy.md "Compression"): gzip at zlib's default level (the only
 * one Next offers; it drops a Content-Encoding a route sets itself, so a cheaper level cannot be
 * applied here) cost 100–270 ms for a 3.5 MB 32-lane GPU window on top of a 30–80 ms
 * answer (#20) — more than sending the text takes on any link of 100 Mbit/s or faster.
 * The dashboard's own GPU lanes come as binary frames, which Next never compresses.
 * Smaller answers stay compressed. The bytes are the same text either way.
 */
export async function jsonResponseSliced(value: unknown, init?: ResponseInit): Promise<Response> {
  return piecesResponse(await jsonPiecesAsync(value), init);
}

/**
 * JSON text, given as pieces, as a response; a long one marked no-transform (see
 * `jsonResponseSliced`). The body is the pieces' UTF-8 bytes in chunks of at most
 * BODY_CHUNK_CHARS characters, encoded as the response is read: the text is never joined
 * into one string nor encoded into one buffer, two fresh allocations of the answer's size
 * (#20: joining a 32-lane GPU window's 3.5 MB took 11 ms in-process, mostly first-touch
 * page faults; through the server the row moved within noise, engine_series's CPU per
 * request fell ~3 ms).
 */
function piecesResponse(pieces: readonly string[], init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  let chars = 0;
  for (const p of pieces) chars += p.length;
  if (chars >= NO_TRANSFORM_MIN_CHARS) {
    const cc = headers.get("cache-control");
    if (!cc || !/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cc)) headers.set("cache-control", cc ? `${cc}, no-transform` : "no-transform");
  }
  if (chars <= BODY_CHUNK_CHARS) return new Response(pieces.join(""), { ...init, headers });
  return new Response(utf8Chunks(pieces), { ...init, headers });
}

/** Body chunks stay below this many characters (a run of pieces is joined up to it; a longer piece is cut). */
const BODY_CHUNK_CHARS = 64 * 1024;

/** The UTF-8 bytes of the joined pieces as a stream of chunks, each encoded when it is pulled. */
export function utf8Chunks(pieces: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  let at = 0; // offset in pieces[i]
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const run: string[] = [];
      let len = 0;
      while (i < pieces.length && len < BODY_CHUNK_CHARS) {
        const p = pieces[i]!;
        let end = Math.min(p.length, at + (BODY_CHUNK_CHARS - len));
        if (end < p.length) {
          // The chunk is full. Never split a surrogate pair (each half alone would encode
          // as U+FFFD): a pair on the edge opens the next chunk. A chunk started empty has
          // room for far more than one character, so every pull makes progress.
          if (isHighSurrogate(p.charCodeAt(end - 1))) end--;
          if (end > at) run.push(p.slice(at, end));
          at = end;
          break;
        }
        run.push(at === 0 ? p : p.slice(at));
        len += end - at;
        i++;
        at = 0;
      }
      if (run.length > 0) controller.enqueue(encoder.encode(run.length === 1 ? run[0]! : run.join("")));
      if (i >= pieces.length) controller.close();
    },
  });
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Heavy answers at least this long go out uncompressed (`jsonResponseSliced`). */
export const NO_TRANSFORM_MIN_CHARS = 1 << 20;

/**
 * Answers the server keeps and hands out again unchanged (a step's summary while its
 * files are unchanged) are frozen by whoever keeps them (`Object.freeze`): a frozen
 * answer never changes, so its JSON text is written once, on the first request that sends
 * it, and kept as long as the answer object is (the cache that holds it decides). A warm
 * summary of 512 samples spent ~1.2 ms of every request writing its text (#20, summary
 * warm row). (Its gzip, ~4 ms, cannot be kept the same way: Next drops the
 * Content-Encoding header of a route's response, so the bytes would arrive undecoded.)
 */
const g = globalThis as unknown as { __rlboardKeptText?: WeakMap<object, Promise<string[]>> };
/**
 * One table per process, not per module instance: Next bundles lib/ once for the routes and
 * once for the instrumentation hook, and the warm-up (lib/server/warmup.ts) writes the text
 * of the answers it loads — a first request that wrote it again spent 5–10 ms on a step's
 * trajectories (#20).
 */
const keptText = (g.__rlboardKeptText ??= new WeakMap<object, Promise<string[]>>());

function keptPieces(value: object): Promise<string[]> {
  let text = keptText.get(value);
  if (!text) keptText.set(value, (text = jsonPiecesAsync(value)));
  return text;
}

/**
 * The response of a frozen answer (null for any other value): its kept text, sent as
 * `jsonResponseSliced` sends text (long answers uncompressed, marked no-transform).
 */
export async function keptAnswerResponse(value: unknown): Promise<Response | null> {
  if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return null;
  return piecesResponse(await keptPieces(value));
}

/** Write a frozen answer's kept text ahead of its first request (the warm-up); other values are ignored. */
export async function keepAnswerText(value: unknown): Promise<void> {
  if (typeof value === "object" && value !== null && Object.isFrozen(value)) await keptPieces(value);
}
