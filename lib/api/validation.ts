/**
 * Contract parsing with FastAPI's error shape (docs/api.md 9.1 and "Errors"): a missing or
 * unparseable parameter is one `detail` item `{type, loc: ["query"|"path", name], msg,
 * input}`; a parsed value the handler refuses (lib/contracts/common.ts `semanticIssue`) is
 * a plain 400 message. The reference validates path params before query params and
 * reports every failing parameter at once; so does `parseRequest`.
 */
import type { z } from "zod";
import { badRequest, unprocessable, type ValidationItem } from "@/lib/contracts/errors";

type Where = "query" | "path";
type Raw = Record<string, unknown>;

interface Checked {
  value: unknown;
  items: ValidationItem[];
  semantic: string[];
}

/** Route folders are camelCase (`[rolloutId]`), the reference's names snake_case (`rollout_id`). */
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** pydantic's wording of a Literal's choices: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
function literalChoices(values: readonly unknown[]): string {
  const q = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  return q.length <= 1 ? (q[0] ?? "") : `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}`;
}

function check(schema: z.ZodType, raw: Raw, where: Where): Checked {
  const r = schema.safeParse(raw);
  if (r.success) return { value: r.data, items: [], semantic: [] };
  const items: ValidationItem[] = [];
  const semantic: string[] = [];
  const seen = new Set<string>();
  for (const issue of r.error.issues) {
    const params = (issue as { params?: Record<string, unknown> }).params;
    if (params?.status === 400) {
      semantic.push(issue.message);
      continue;
    }
    const name = issue.path.length ? String(issue.path[0]) : "";
    if (seen.has(name)) continue; // one item per parameter, as pydantic for a scalar field
    seen.add(name);
    const loc = [where, where === "path" ? snake(name) : name];
    const input = raw[name];
    if (input === undefined) {
      items.push({ type: "missing", loc, msg: "Field required", input: null });
    } else if (typeof params?.fastapi === "string") {
      items.push({ type: params.fastapi, loc, msg: issue.message, input });
    } else if (issue.code === "invalid_value") {
      const expected = literalChoices((issue as { values: readonly unknown[] }).values);
      items.push({ type: "literal_error", loc, msg: `Input should be ${expected}`, input, ctx: { expected } });
    } else {
      items.push({ type: "value_error", loc, msg: issue.message, input });
    }
  }
  return { value: undefined, items, semantic };
}

/**
 * Parse path params, then the query, with the route's contracts. Throws a 422 listing
 * every type failure, else a 400 with the first refused value.
 */
export function parseRequest<P, Q>(
  paramsSchema: z.ZodType | undefined,
  rawParams: Raw,
  querySchema: z.ZodType | undefined,
  rawQuery: Raw,
): { params: P; query: Q } {
  const p = paramsSchema ? check(paramsSchema, rawParams, "path") : null;
  const q = querySchema ? check(querySchema, rawQuery, "query") : null;
  const items = [...(p?.items ?? []), ...(q?.items ?? [])];
  if (items.length) throw unprocessable(items);
  const semantic = [...(p?.semantic ?? []), ...(q?.semantic ?? [])];
  if (semantic.length) throw badRequest(semantic[0]!);
  return { params: p?.value as P, query: q?.value as Q };
}
