import { isNumberRun, MAX_NUMBER_BYTES, numbersInto } from "@/lib/api/number-text";

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
  return Buffer.concat((await jsonBytesAsync(value, sliceMs, depth)).chunks()).toString("utf8");
}

/** The text of `jsonSafeStringifyAsync` as UTF-8 bytes. */
async function jsonBytesAsync(value: unknown, sliceMs = 8, depth = 3): Promise<JsonSink> {
  const nodes = nodesUpTo(value, NATIVE_NODES);
  // The first buffer sized for the answer: most heavy answers are a few KB (outliers, the
  // advisory), and a buffer of FIRST_BYTES for each of them was a fresh mapping every request.
  // MAX_NUMBER_BYTES a value: a run of numbers asks that much room, so the answer's runs fit.
  const sink = new JsonSink(Math.min(FIRST_BYTES, Math.max(MIN_FIRST_BYTES, nodes * MAX_NUMBER_BYTES)));
  // Most answers are small: written in one go, no awaits (an awaited call per member costs
  // more than the whole text — a 0.3 MB trajectories answer took 20 ms sliced, 3 ms native).
  if (sliceMs > 0 && nodes <= NATIVE_NODES) {
    writeSync(value, sink, false);
    return sink;
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
      sink.ascii("[");
      for (let i = 0; i < p.length; i += NUMBER_RUN) {
        if (i > 0) sink.ascii(",");
        sink.numbers(p, i, Math.min(p.length, i + NUMBER_RUN));
        await tick();
      }
      sink.ascii("]");
      return;
    }
    if (level >= depth || typeof p !== "object" || p === null || ArrayBuffer.isView(p) || (sliceMs > 0 && nodesUpTo(p, NATIVE_NODES) <= NATIVE_NODES)) {
      writeSync(p, sink, inArray);
      return;
    }
    if (Array.isArray(p)) {
      sink.ascii("[");
      for (let i = 0; i < p.length; i += ARRAY_RUN) {
        if (i > 0) sink.ascii(",");
        const run = p.slice(i, i + ARRAY_RUN);
        if (run.every(isFlat)) {
          sink.text(JSON.stringify(plain(run)).slice(1, -1));
        } else if (level + 1 >= depth || (sliceMs > 0 && nodesUpTo(run, NATIVE_NODES) <= NATIVE_NODES)) {
          for (let j = 0; j < run.length; j++) {
            if (j > 0) sink.ascii(",");
            writeSync(run[j], sink, true);
          }
        } else {
          for (let j = 0; j < run.length; j++) {
            if (j > 0) sink.ascii(",");
            await write(run[j], level + 1, true);
          }
        }
        await tick();
      }
      sink.ascii("]");
      return;
    }
    if (!isPlainObject(p)) {
      sink.text(JSON.stringify(plain(p)));
      return;
    }
    sink.ascii("{");
    for (const [k, x] of jsonMembers(p)) {
      sink.text(k);
      sink.ascii(":");
      await write(x, level + 1, false);
      await tick();
    }
    sink.ascii("}");
  };
  await write(value, 0, false);
  return sink;
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
 * `value`'s JSON text (as `jsonSafeStringify` writes it) appended to `sink` without
 * yielding: plain objects, and short arrays of containers, are walked so that each run of
 * numbers they hold is written by `numbersInto` (a series' timestamps: ~2.7× faster than
 * JSON.stringify, lib/api/number-text.ts); everything else is one native call.
 */
function writeSync(p: unknown, sink: JsonSink, inArray: boolean): void {
  if (isNumberRun(p) && p.length >= NUMBER_RUN_MIN) {
    sink.ascii("[");
    sink.numbers(p, 0, p.length);
    sink.ascii("]");
    return;
  }
  if (typeof p === "object" && p !== null && !ArrayBuffer.isView(p)) {
    if (Array.isArray(p)) {
      if (p.length <= WALK_MAX && !p.every(isFlat)) {
        sink.ascii("[");
        for (let i = 0; i < p.length; i++) {
          if (i > 0) sink.ascii(",");
          writeSync(p[i], sink, true);
        }
        sink.ascii("]");
        return;
      }
    } else if (isPlainObject(p)) {
      sink.ascii("{");
      for (const [k, x] of jsonMembers(p)) {
        sink.text(k);
        sink.ascii(":");
        writeSync(x, sink, false);
      }
      sink.ascii("}");
      return;
    }
  }
  const s = JSON.stringify(plain(p));
  sink.text(s === undefined ? (inArray ? "null" : "") : s);
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
 * Where an answer's JSON text is written, as UTF-8 bytes: strings (JSON.stringify's text of
 * a run of elements, keys, brackets) are encoded where they are appended, and runs of
 * numbers are written as digits straight into the same buffers (`numbersInto`). The text
 * never exists as a string: written as string pieces, then joined or encoded in 64 Ki
 * chunks as the response was read, a 4 h engine_series answer (550 KB) spent ~1 ms of its
 * server time in those copies and 17 reads of its body stream (#20).
 *
 * The bytes go into a first buffer of `firstBytes` (sized for the answer, at most
 * FIRST_BYTES), then buffers of CHUNK_BYTES (a longer string gets one of its own size): a
 * large answer is never copied to grow one. Buffers of 64 KiB measured ~1 ms slower for the
 * engine_series answer than 256 KiB and then 1 MiB (more buffers, and a run of numbers
 * split to fit each), through the server, alternating requests between two servers of the
 * two builds; buffers growing by twice what was written gave it three instead of two.
 */
export class JsonSink {
  private readonly full: Uint8Array<ArrayBuffer>[] = [];
  private buf: Buffer<ArrayBuffer> = Buffer.alloc(0);
  private at = 0;
  /** Bytes written so far. */
  bytes = 0;

  constructor(private readonly firstBytes = FIRST_BYTES) {}

  /** A string of JSON text (any characters: JSON.stringify's text is well-formed UTF-16). */
  text(s: string): void {
    if (s.length === 0) return;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; only where that might not fit is it counted
    if (this.buf.length - this.at < s.length * 3) this.room(Buffer.byteLength(s));
    const n = this.buf.write(s, this.at);
    this.at += n;
    this.bytes += n;
  }

  /** A short ASCII literal (a bracket, a comma, a colon). */
  ascii(s: string): void {
    if (this.buf.length - this.at < s.length) this.room(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.at++] = s.charCodeAt(i);
    this.bytes += s.length;
  }

  /**
   * `values[from..to)` as JSON numbers joined by commas: `numbersInto`'s digits, in runs of
   * NUMBERS_AT_ONCE (so the room one takes fits a buffer), and JSON.stringify's text for a run
   * it refuses.
   */
  numbers(values: ArrayLike<unknown>, from: number, to: number): void {
    for (let i = from; i < to; i += NUMBERS_AT_ONCE) {
      const end = Math.min(to, i + NUMBERS_AT_ONCE);
      if (i > from) this.ascii(",");
      this.room((end - i) * MAX_NUMBER_BYTES);
      if (this.repeat(values, i, end)) continue;
      const start = this.at;
      const at = numbersInto(values, i, end, this.buf, start);
      if (at >= 0) {
        this.bytes += at - start;
        this.at = at;
        const recent = this.recent;
        if (recent.length === REPEAT_KEPT) recent.shift();
        recent.push({ values, from: i, to: end, buf: this.buf, start, end: at });
      } else this.text(JSON.stringify(plain(Array.prototype.slice.call(values, i, end))).slice(1, -1));
    }
  }

  /**
   * The last runs of numbers written as digits, and where their text is: the series of one
   * answer often share their timestamps (every engine is scraped on the same tick, every
   * GPU of a node sampled on the same tick), and a run equal to one of them element for
   * element has the same text, copied instead of written again (a 4 h engine_series
   * answer: 8 series of the same 4,000 ticks, #20).
   */
  private readonly recent: { values: ArrayLike<unknown>; from: number; to: number; buf: Buffer; start: number; end: number }[] = [];

  /** `values[from..to)` equals a recent run: its text copied here (the caller made room). */
  private repeat(values: ArrayLike<unknown>, from: number, to: number): boolean {
    if (to - from < REPEAT_MIN) return false;
    next: for (const run of this.recent) {
      if (run.to - run.from !== to - from) continue;
      const prev = run.values;
      const d = run.from - from;
      // (the same stretch of the same array — series sharing one timestamps array — is equal as it stands)
      if (prev !== values || d !== 0) for (let i = from; i < to; i++) if (values[i] !== prev[i + d]) continue next;
      const n = run.end - run.start;
      run.buf.copy(this.buf, this.at, run.start, run.end);
      this.at += n;
      this.bytes += n;
      return true;
    }
    return false;
  }

  /** The bytes written, in order (views of the sink's buffers). */
  chunks(): Uint8Array<ArrayBuffer>[] {
    return this.at > 0 ? [...this.full, this.buf.subarray(0, this.at)] : [...this.full];
  }

  /** At least `n` bytes free at `at`: else the current buffer is closed and a new one started. */
  private room(n: number): void {
    if (this.buf.length - this.at >= n) return;
    if (this.at > 0) this.full.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(Math.max(n, this.full.length === 0 && this.at === 0 ? this.firstBytes : CHUNK_BYTES));
    this.at = 0;
  }
}

/** A sink's first buffer at most (a 4 h engine_series answer fills it and one more), and each buffer after it (unless one string needs more). */
const FIRST_BYTES = 256 * 1024;
const CHUNK_BYTES = 1 << 20;
/** Runs shorter than this are written again rather than compared with recent ones; and how many recent runs are kept. */
const REPEAT_MIN = 64;
const REPEAT_KEPT = 4;
/** A sink's first buffer at least. */
const MIN_FIRST_BYTES = 1024;
/** Numbers written at once (their room, MAX_NUMBER_BYTES each, fits a buffer). */
const NUMBERS_AT_ONCE = Math.floor(FIRST_BYTES / MAX_NUMBER_BYTES);

/**
 * `jsonResponse` for heavy answers: serialised in slices (`jsonSafeStringifyAsync`).
 *
 * An answer of NO_TRANSFORM_MIN_BYTES or more is marked `Cache-Control: no-transform`, which
 * Next's response compression honours where it is on (`--compress`; off by default on a
 * loopback address, docs/deploy.md "Compression"): gzip at zlib's default level (the only
 * one Next offers; it drops a Content-Encoding a route sets itself, so a cheaper level cannot be
 * applied here) cost 100–270 ms for a 3.5 MB 32-lane GPU window on top of a 30–80 ms
 * answer (#20) — more than sending the text takes on any link of 100 Mbit/s or faster.
 * The dashboard's own GPU lanes come as binary frames, which Next never compresses.
 * Smaller answers stay compressed. The bytes are the same text either way.
 */
export async function jsonResponseSliced(value: unknown, init?: ResponseInit): Promise<Response> {
  const sink = await jsonBytesAsync(value);
  return bytesResponse(sink.chunks(), sink.bytes, init);
}

/** JSON text as UTF-8 chunks, sent in that order; a long one marked no-transform (see `jsonResponseSliced`). */
function bytesResponse(chunks: readonly Uint8Array<ArrayBuffer>[], bytes: number, init?: ResponseInit): Response {
  const headers = new Headers(init?.headers);
  headers.set("content-type", "application/json");
  if (bytes >= NO_TRANSFORM_MIN_BYTES) {
    const cc = headers.get("cache-control");
    if (!cc || !/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cc)) headers.set("cache-control", cc ? `${cc}, no-transform` : "no-transform");
  }
  // A Response copies a byte body it is given whole (undici, as the Fetch standard says);
  // one it reads from a stream it does not.
  if (chunks.length <= 1 && bytes <= DIRECT_MAX_BYTES) return new Response(chunks[0] ?? "", { ...init, headers });
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(chunks[i++]);
      if (i === chunks.length) controller.close();
    },
  });
  return new Response(body, { ...init, headers });
}

/** Bodies up to this long are handed to the Response whole (copied there), longer ones as a stream. */
const DIRECT_MAX_BYTES = 64 * 1024;

/** Heavy answers at least this long go out uncompressed (`jsonResponseSliced`). */
export const NO_TRANSFORM_MIN_BYTES = 1 << 20;

/**
 * Answers the server keeps and hands out again unchanged (a step's summary while its
 * files are unchanged) are frozen by whoever keeps them (`Object.freeze`): a frozen
 * answer never changes, so its JSON text is written once, on the first request that sends
 * it, and kept as long as the answer object is (the cache that holds it decides). A warm
 * summary of 512 samples spent ~1.2 ms of every request writing its text (#20, summary
 * warm row). (Its gzip, ~4 ms, cannot be kept the same way: Next drops the
 * Content-Encoding header of a route's response, so the bytes would arrive undecoded.)
 * The text is kept as one buffer of its exact length, not the sink's partly filled ones.
 */
const g = globalThis as unknown as { __rlboardKeptBytes?: WeakMap<object, Promise<Uint8Array<ArrayBuffer>>> };
/**
 * One table per process, not per module instance: Next bundles lib/ once for the routes and
 * once for the instrumentation hook, and the warm-up (lib/server/warmup.ts) writes the text
 * of the answers it loads — a first request that wrote it again spent 5–10 ms on a step's
 * trajectories (#20).
 */
const keptBytes = (g.__rlboardKeptBytes ??= new WeakMap<object, Promise<Uint8Array<ArrayBuffer>>>());

function kept(value: object): Promise<Uint8Array<ArrayBuffer>> {
  let bytes = keptBytes.get(value);
  if (!bytes) keptBytes.set(value, (bytes = jsonBytesAsync(value).then((sink) => Buffer.concat(sink.chunks()))));
  return bytes;
}

/**
 * The response of a frozen answer (null for any other value): its kept text, sent as
 * `jsonResponseSliced` sends text (long answers uncompressed, marked no-transform).
 */
export async function keptAnswerResponse(value: unknown): Promise<Response | null> {
  if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return null;
  const bytes = await kept(value);
  return bytesResponse([bytes], bytes.length);
}

/** Write a frozen answer's kept text ahead of its first request (the warm-up); other values are ignored. */
export async function keepAnswerText(value: unknown): Promise<void> {
  if (typeof value === "object" && value !== null && Object.isFrozen(value)) await kept(value);
}
