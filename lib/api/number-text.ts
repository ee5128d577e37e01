/**
 * The JSON text of a run of numbers, character for character what `JSON.stringify` writes
 * for them (non-finite → `null`, −0 → `0`), joined by commas without brackets.
 *
 * Why: an answer's series are mostly timestamps in seconds with millisecond decimals
 * (1763985573.006). V8 writes each through its shortest-round-trip conversion, ~160 ns a
 * number on this project's 2-core machines: 20 of the 29 ms a 32-lane GPU window's 3.5 MB
 * of JSON took (#20, docs/bench.md "2026-12-07 b"). Such a number is an integer count of
 * milliseconds `k`, and its shortest text is `k / 1000` written out with the trailing zeros
 * of the fraction dropped — digits this writer produces with integer arithmetic.
 *
 * Why that text is JSON's (ECMA-262 Number::toString): for `x` = the double nearest to
 * k/1000 with |x| < 2^31, the decimal D = k/1000 rounds to `x`; every other decimal with as
 * many or fewer significant digits lies ≥ 0.001 from D (its last digit is at D's place or
 * above, and D's last nonzero digit is not a multiple of the coarser step), while two
 * decimals that both round to `x` lie within one ulp(x) ≤ 2^-21 of each other. So D is the
 * unique shortest decimal of `x`, and JSON writes it in plain notation (0.001 ≤ |x| < 1e21).
 * Every other number (more decimals, larger magnitudes, NaN) is written by `String(x)`.
 */

/** Scratch, reused by every call (the writer never yields while it holds it): the numbers as doubles. */
let xsScratch = new Float64Array(8192);
/** A scratch grown past this is dropped after the call (callers cut runs of numbers well below). */
const KEEP_BYTES = 4 << 20;

const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
/** Bytes one number can take: "-" 10 digits "." 3 digits, or String(x) of any double (≤ 24) and a comma. */
export const MAX_NUMBER_BYTES = 32;
const INT_LIMIT = 2 ** 31;
/** A run where more than a quarter of the numbers (past the first 16) are neither integers nor milliseconds is left to JSON.stringify. */
const OTHERS_MIN = 16;
/** "00" … "99": two digits a division. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) => ZERO + (i & 1 ? (i >> 1) % 10 : ((i >> 1) / 10) | 0));

/**
 * `values[from..to)` as JSON numbers joined by commas, written as ASCII into `b` from `at`
 * (the caller leaves `(to − from) × MAX_NUMBER_BYTES` bytes of room there); returns where
 * the text ends. −1 — the caller then writes the run another way; bytes past `at` may have
 * been written — when an element is not a number (an array holding null, strings,
 * objects), or when more than a quarter of them are neither integers nor milliseconds
 * (log-probabilities, means: `String(x)` costs more there than JSON.stringify's write).
 * The API's JSON writer puts answers' numbers straight into their response bytes this way
 * (lib/api/json.ts `JsonSink`).
 */
export function numbersInto(values: ArrayLike<unknown>, from: number, to: number, b: Buffer, at: number): number {
  if (to <= from) return at;
  const n = to - from;
  if (xsScratch.length < n) xsScratch = new Float64Array(n);
  const xs = xsScratch;
  // The numbers are first copied into one Float64Array, so the loop below reads a single
  // kind of array. Read straight from whatever it was given (JS arrays of small integers
  // or doubles, typed arrays of six kinds: one server process sees them all), its element
  // load went megamorphic: the 32-lane answer's timestamps 7.6 → 14.6 ms.
  let end = -1;
  if (ArrayBuffer.isView(values)) {
    if (isNumberRun(values)) {
      // not BigInt arrays, DataView
      xs.set((values as unknown as Float64Array).subarray(from, to));
      end = writeNumbers(xs, n, b, at);
    }
  } else if (copyNumbers(values, from, to, xs)) end = writeNumbers(xs, n, b, at);
  if (xs.length > KEEP_BYTES / 8) xsScratch = new Float64Array(8192);
  return end;
}

/**
 * `xs[0..n)` as JSON text into `b` from `at`; returns where it ends, or -1 for a run of
 * mostly other numbers. Its own function: inside its caller, whose first long run V8
 * compiles while in this loop, the code after the loop kept deoptimizing ("insufficient type
 * feedback" at the text's `toString`, dozens of times a process).
 */
function writeNumbers(xs: Float64Array, n: number, b: Buffer, at: number): number {
  let others = 0;
  // The digits above the last five of the last number of 6+ integer digits, and where they
  // were written: a series' timestamps (1763985602.012, …) share them, so most numbers copy
  // them from there and only write their last five digits. With the int32 arithmetic
  // below, the 32 k timestamps of a 4 h engine_series answer: 1.21 → 0.72 ms (#20).
  let hiValue = -1;
  let hiAt = 0;
  let hiLen = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    if (i > 0) b[at++] = COMMA;
    // One loop body, no calls on the common path (V8 did not inline a per-number helper
    // in the server's bundle: 43 ns a number there against ~20 in a test process).
    // `v` and `frac` are int32 (`| 0`): V8 then divides them by constants with a multiply
    // instead of a floating-point division (up to seven a number).
    let v: number;
    let frac = 0;
    if ((x | 0) === x && x >= 0) v = x | 0; // a count, a percentage, MB (−0 included: "0")
    else {
      const ax = x < 0 ? -x : x;
      const k = Math.round(ax * 1000);
      if (!(ax < INT_LIMIT && k / 1000 === ax)) {
        // Mostly such numbers (fractions of every length): JSON.stringify writes them faster.
        if (++others > OTHERS_MIN && others * 4 > i) return -1;
        at = writeOther(b, at, x);
        continue;
      }
      if (x < 0) b[at++] = MINUS;
      // floor(ax) is floor(k / 1000): ax is the double nearest k / 1000, which is either
      // that integer (exact below 2^31) or at least 0.001 from every integer.
      const whole = Math.floor(ax);
      v = whole | 0;
      frac = (k - whole * 1000) | 0;
    }
    if (v >= 100000) {
      const hi = (v / 100000) | 0; // 1 … 21474 (v < 2^31)
      const lo = (v - hi * 100000) | 0;
      if (hi === hiValue) {
        for (let j = 0; j < hiLen; j++) b[at + j] = b[hiAt + j]!;
      } else {
        hiValue = hi;
        hiLen = hi < 100 ? (hi < 10 ? 1 : 2) : hi < 1e3 ? 3 : hi < 1e4 ? 4 : 5;
        let p = at + hiLen;
        let h = hi;
        while (h >= 10) {
          const q = (h / 10) | 0;
          b[--p] = ZERO + (h - q * 10);
          h = q;
        }
        b[--p] = ZERO + h;
      }
      hiAt = at;
      at += hiLen;
      // the last five digits, zeros kept
      const q1 = (lo / 1000) | 0;
      const r1 = (lo - q1 * 1000) | 0;
      const q2 = (r1 / 10) | 0;
      b[at] = PAIRS[q1 << 1]!;
      b[at + 1] = PAIRS[(q1 << 1) + 1]!;
      b[at + 2] = PAIRS[q2 << 1]!;
      b[at + 3] = PAIRS[(q2 << 1) + 1]!;
      b[at + 4] = ZERO + (r1 - q2 * 10);
      at += 5;
    } else {
      const end = at + (v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : v < 10000 ? 4 : 5);
      let p = end;
      while (v >= 100) {
        const q = (v / 100) | 0;
        const r = ((v - q * 100) | 0) << 1;
        b[--p] = PAIRS[r + 1]!;
        b[--p] = PAIRS[r]!;
        v = q;
      }
      if (v >= 10) {
        b[--p] = PAIRS[(v << 1) + 1]!;
        b[--p] = PAIRS[v << 1]!;
      } else b[--p] = ZERO + v;
      at = end;
    }
    if (frac !== 0) {
      // milliseconds: up to three digits, trailing zeros dropped
      b[at++] = DOT;
      const d1 = (frac / 100) | 0;
      const rest = (frac - d1 * 100) | 0;
      const d2 = (rest / 10) | 0;
      const d3 = (rest - d2 * 10) | 0;
      b[at++] = ZERO + d1;
      if (d2 !== 0 || d3 !== 0) b[at++] = ZERO + d2;
      if (d3 !== 0) b[at++] = ZERO + d3;
    }
  }
  return at;
}

/** `values[from..to)` into `xs`; false when one is not a number. */
function copyNumbers(values: ArrayLike<unknown>, from: number, to: number, xs: Float64Array): boolean {
  for (let i = from; i < to; i++) {
    const x = values[i];
    if (typeof x !== "number") return false;
    xs[i - from] = x;
  }
  return true;
}

/** Whether `v` is a typed array of numbers (not BigInt) or an array that starts and ends with a number. */
export function isNumberRun(v: unknown): v is ArrayLike<number> {
  if (ArrayBuffer.isView(v)) return !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array);
  if (!Array.isArray(v) || v.length === 0) return false;
  return typeof v[0] === "number" && typeof v[v.length - 1] === "number";
}

/** Any other number, as JSON writes it. */
function writeOther(b: Buffer, at: number, x: number): number {
  const s = Number.isFinite(x) ? String(x) : "null";
  for (let j = 0; j < s.length; j++) b[at++] = s.charCodeAt(j);
  return at;
}
