/**
 * Python number formatting where message text must match the reference byte for byte:
 * `repr(float)`, `f"{x:.Nf}"`, `"%g" % x` and `round(x, n)`. Python rounds the EXACT
 * binary value and breaks exact ties to even; JS `toFixed` breaks ties away from zero, so
 * rounding here works on the exact decimal expansion of the double (BigInt).
 */
export { formatFloat as pyRepr } from "@/lib/store/format";

interface Exact {
  neg: boolean;
  /** |x| = digits / 10^scale */
  digits: bigint;
  scale: number;
}

function exact(x: number): Exact {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const hi = dv.getUint32(0);
  const lo = dv.getUint32(4);
  const neg = hi >>> 31 === 1;
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (bexp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  if (e >= 0) return { neg, digits: mant << BigInt(e), scale: 0 };
  return { neg, digits: mant * 5n ** BigInt(-e), scale: -e };
}

/** Round |x| to `d` decimals (d may be negative), half to even: value = q / 10^d. */
function roundExact(x: Exact, d: number): bigint {
  const k = x.scale - d;
  if (k <= 0) return x.digits * 10n ** BigInt(-k);
  const div = 10n ** BigInt(k);
  let q = x.digits / div;
  const r = x.digits % div;
  const twice = r * 2n;
  if (twice > div || (twice === div && q % 2n === 1n)) q += 1n;
  return q;
}

function placePoint(q: bigint, d: number): string {
  if (d <= 0) return (q * 10n ** BigInt(-d)).toString();
  const s = q.toString().padStart(d + 1, "0");
  return `${s.slice(0, s.length - d)}.${s.slice(s.length - d)}`;
}

function nonFinite(x: number): string | null {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  return null;
}

/** Python `f"{x:.{d}f}"`. */
export function pyFixed(x: number, d: number): string {
  const nf = nonFinite(x);
  if (nf !== null) return nf;
  const ex = exact(x);
  const s = placePoint(roundExact(ex, d), d);
  return ex.neg ? `-${s}` : s;
}

/** Python `round(x, d)` for a float. */
export function pyRound(x: number, d: number): number {
  if (!Number.isFinite(x)) return x;
  // Fast path: no decimal tie is possible unless x·10^d sits (almost) exactly on .5.
  const scaled = x * 10 ** d;
  const frac = Math.abs(scaled - Math.trunc(scaled));
  if (Math.abs(frac - 0.5) > 1e-6) return Math.round(scaled) / 10 ** d;
  return Number(pyFixed(x, d));
}

/** Python `"%g" % x` (precision 6). */
export function pyG(x: number, precision = 6): string {
  const nf = nonFinite(x);
  if (nf !== null) return nf;
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const ex = exact(x);
  const P = precision;
  // Decimal exponent E of the exact value: |x| = d.ddd × 10^E.
  let E = ex.digits.toString().length - 1 - ex.scale;
  let q = roundExact(ex, P - 1 - E);
  if (q.toString().length > P) {
    E += 1;
    q = roundExact(ex, P - 1 - E);
  }
  let body: string;
  if (E >= -4 && E < P) {
    body = placePoint(q, P - 1 - E);
    if (body.includes(".")) body = body.replace(/0+$/, "").replace(/\.$/, "");
  } else {
    const s = q.toString();
    let mant = s.length > 1 ? `${s[0]}.${s.slice(1)}` : s;
    if (mant.includes(".")) mant = mant.replace(/0+$/, "").replace(/\.$/, "");
    body = `${mant}e${E < 0 ? "-" : "+"}${String(Math.abs(E)).padStart(2, "0")}`;
  }
  return ex.neg ? `-${body}` : body;
}
