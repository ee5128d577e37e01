/**
 * Shared zod building blocks for query strings and path params. Values arrive as strings
 * and parse with FastAPI's (pydantic v2) semantics (docs/api.md 9.1): numbers in decimal
 * or exponent notation, decimal integers, booleans as true/false, 1/0, yes/no, on/off,
 * t/f, y/n (any case).
 *
 * Two kinds of failure, told apart by the issue's `params` (read by lib/api/validation.ts):
 *  - a type failure carries `params.fastapi` = pydantic's error type (`int_parsing`,
 *    `float_parsing`, `bool_parsing`) → 422 with FastAPI's `detail` list;
 *  - a value the reference rejects in its handler (a non-finite window bound, a size over
 *    its maximum) carries `params.status = 400` and the message → 400.
 * Anything else zod reports (a missing field, a wrong enum value) is mapped to its
 * pydantic equivalent there.
 */
import { z } from "zod";

export type FastApiType = "int_parsing" | "float_parsing" | "bool_parsing";

/** pydantic v2's messages for the types the reference declares. */
export const FASTAPI_MSG: Record<FastApiType, string> = {
  int_parsing: "Input should be a valid integer, unable to parse string as an integer",
  float_parsing: "Input should be a valid number, unable to parse string as a number",
  bool_parsing: "Input should be a valid boolean, unable to interpret input",
};

type Ctx = { addIssue(issue: { code: "custom"; message: string; params?: Record<string, unknown> }): void };

function typeIssue(ctx: Ctx, type: FastApiType): typeof z.NEVER {
  ctx.addIssue({ code: "custom", message: FASTAPI_MSG[type], params: { fastapi: type } });
  return z.NEVER;
}

/** A value the handler refuses: 400 with this message (not a 422 type error). */
export function semanticIssue(ctx: Ctx, message: string): void {
  ctx.addIssue({ code: "custom", message, params: { status: 400 } });
}

const TRUE = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE = new Set(["false", "0", "no", "off", "f", "n"]);

export const QueryBool = z.union([z.boolean(), z.string()]).transform((v, ctx) => {
  if (typeof v === "boolean") return v;
  const s = v.toLowerCase();
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  return typeIssue(ctx, "bool_parsing");
});

/** A decimal integer (no "1.5", no "1e3", no "0x10"), as FastAPI's int parsing. */
export const QueryInt = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = String(v).trim();
  if (!/^[+-]?\d+$/.test(s)) return typeIssue(ctx, "int_parsing");
  return Number(s);
});

const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A float in decimal or exponent notation; like Python's float(), "inf"/"nan" are accepted. */
export const QueryFloat = z.union([z.number(), z.string()]).transform((v, ctx) => {
  if (typeof v === "number") return v;
  const s = v.trim();
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (special) {
    if (special[2]!.toLowerCase() === "nan") return Number.NaN;
    return special[1] === "-" ? -Infinity : Infinity;
  }
  if (!FLOAT_RE.test(s)) return typeIssue(ctx, "float_parsing");
  return Number(s);
});

const pyFloatRepr = (n: number) => (Number.isNaN(n) ? "nan" : n > 0 ? "inf" : "-inf");

/**
 * A window bound (`t0`, `t1`): parses as a float like the reference, then refuses NaN and
 * ±Inf with a 400 — no time window can start or end there (docs/api.md "Errors").
 */
export function QueryTime(name: string) {
  return QueryFloat.superRefine((n, ctx) => {
    if (!Number.isFinite(n)) semanticIssue(ctx, `${name}=${pyFloatRepr(n)} is not a finite number`);
  });
}

/** A string of at most `max` characters (400 beyond). */
export function QueryText(name: string, max: number) {
  return z.string().superRefine((s, ctx) => {
    if (s.length > max) semanticIssue(ctx, `${name} is ${s.length} characters long; the maximum is ${max}`);
  });
}
