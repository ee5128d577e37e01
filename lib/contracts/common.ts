/**
 * Shared zod building blocks for query strings. Query values arrive as strings, so
 * numbers use z.coerce and booleans accept what the Python server accepted
 * (true/false, 1/0, yes/no, on/off, t/f, y/n — any case).
 */
import { z } from "zod";

const TRUE = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE = new Set(["false", "0", "no", "off", "f", "n"]);

export const QueryBool = z.union([z.boolean(), z.string()]).transform((v, ctx) => {
  if (typeof v === "boolean") return v;
  const s = v.toLowerCase();
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  ctx.addIssue({ code: "custom", message: `expected a boolean (true/false), got '${v}'` });
  return z.NEVER;
});

/** A decimal integer (no "1.5", no "1e3"), as FastAPI's int parsing. */
export const QueryInt = z
  .union([z.number(), z.string()])
  .transform((v, ctx) => {
    const s = String(v).trim();
    if (!/^[+-]?\d+$/.test(s)) {
      ctx.addIssue({ code: "custom", message: `expected an integer, got '${String(v)}'` });
      return z.NEVER;
    }
    return Number(s);
  });

/** A float in decimal or exponent notation; like Python's float(), "inf"/"nan" are accepted. */
export const QueryFloat = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = String(v).trim();
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (special) {
    if (special[2]!.toLowerCase() === "nan") return Number.NaN;
    return special[1] === "-" ? -Infinity : Infinity;
  }
  const n = s === "" ? Number.NaN : Number(s);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: "custom", message: `expected a number, got '${String(v)}'` });
    return z.NEVER;
  }
  return n;
});
