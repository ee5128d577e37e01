import "server-only";
/**
 * The one wrapper every route handler goes through (docs/architecture.md, "Request path"). It does exactly four
 * things: authenticate, resolve `?run=` to a RunContext, parse query/params with the
 * route's zod contract, and map thrown errors to `{"error":{code,message}}` bodies.
 * Handlers return plain data (serialised by `jsonSafeStringify`, NaN → null) or a
 * ready-made Response (binary frames).
 */
import type { z } from "zod";
import { ApiError, toErrorResponse } from "@/lib/api/errors";
import { jsonResponse } from "@/lib/api/json";
import { authenticateRequest, type AuthUser } from "@/lib/server/auth/request-auth";
import { getRunOrThrow, type RunContext } from "@/lib/server/runs/context";

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export interface ApiOptions<Q extends Schema | undefined, P extends Schema | undefined> {
  query?: Q;
  params?: P;
  /** "member": any signed-in user or token (default); "admin": role admin; "public": no auth. */
  auth?: "member" | "admin" | "public";
  /** Resolve `?run=` (or the single run) into `ctx.run`. Default true. */
  run?: boolean;
}

export interface ApiContext<Q, P> {
  req: Request;
  url: URL;
  query: Q;
  params: P;
  user: AuthUser | null;
  run: RunContext;
}

type RouteContext = { params: Promise<Record<string, string | string[]>> };

export function withApi<Q extends Schema | undefined = undefined, P extends Schema | undefined = undefined>(
  opts: ApiOptions<Q, P>,
  handler: (ctx: ApiContext<Infer<Q>, Infer<P>>) => Promise<unknown>,
): (req: Request, routeCtx: RouteContext) => Promise<Response> {
  return async (req, routeCtx) => {
    try {
      const url = new URL(req.url);
      const auth = opts.auth ?? "member";
      let user: AuthUser | null = null;
      if (auth !== "public") {
        user = await authenticateRequest(req);
        if (!user) throw new ApiError("unauthorized", "sign in or send 'Authorization: Bearer <token>'");
        if (auth === "admin" && user.role !== "admin") throw new ApiError("forbidden", "admin role required");
      }
      const rawQuery = Object.fromEntries(url.searchParams.entries());
      const runId = typeof rawQuery.run === "string" ? rawQuery.run : undefined;
      delete rawQuery.run;
      const query = (opts.query ? opts.query.parse(rawQuery) : undefined) as Infer<Q>;
      const rawParams = await (routeCtx?.params ?? Promise.resolve({}));
      const params = (opts.params ? opts.params.parse(rawParams) : undefined) as Infer<P>;
      const run = (opts.run ?? true) ? await getRunOrThrow(runId) : (undefined as unknown as RunContext);
      const result = await handler({ req, url, query, params, user, run });
      return result instanceof Response ? result : jsonResponse(result);
    } catch (err) {
      return toErrorResponse(err);
    }
  };
}
