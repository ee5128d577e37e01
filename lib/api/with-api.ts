import "server-only";
/**
 * The one wrapper every route handler goes through (docs/architecture.md, "Request path"). It does exactly five
 * things: authenticate, parse path params and query with the route's zod contracts
 * (FastAPI's 422 / 400 split, lib/api/validation.ts), admit expensive routes through the
 * heavy-query gate (lib/api/admission.ts; while a heavy answer is computed, the telemetry
 * cache's writes wait), resolve `?run=` to a RunContext, and map thrown errors to
 * `{"detail", "error":{code,message}}` bodies (lib/api/errors.ts).
 * Handlers return plain data (serialised by `jsonSafeStringify`, NaN → null) or a
 * ready-made Response (binary frames).
 */
import type { z } from "zod";
import { heavyGate, DEFAULT_GATE, type Release } from "@/lib/api/admission";
import { ApiError } from "@/lib/contracts/errors";
import { toErrorResponse } from "@/lib/api/errors";
import { jsonResponse, jsonResponseSliced, keptAnswerResponse } from "@/lib/api/json";
import { parseRequest } from "@/lib/api/validation";
import { serverEnv } from "@/lib/env";
import { authenticateRequest, type AuthUser } from "@/lib/server/auth/request-auth";
import { guardTrajectoryRead, type TrajectoryKind } from "@/lib/server/auth/trajectory-guard";
import { getDb } from "@/lib/server/db";
import { getRunOrThrow, type RunContext } from "@/lib/server/runs/context";
import { noteRunOpened } from "@/lib/server/runs/recent";
import { whileAnswering } from "@/lib/store/telemetry";

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export interface ApiOptions<Q extends Schema | undefined, P extends Schema | undefined> {
  query?: Q;
  params?: P;
  /** "member": any signed-in user or token (default); "admin": role admin; "public": no auth. */
  auth?: "member" | "admin" | "public";
  /** Resolve `?run=` (or the single run) into `ctx.run`. Default true. */
  run?: boolean;
  /**
   * "heavy": the answer costs real CPU/IO (series, heatmaps, dumps) — it runs only when
   * the heavy-query gate admits it (503 busy + Retry-After otherwise). Default "light".
   */
  cost?: "light" | "heavy";
  /**
   * The answer holds trajectory content ("messages", "tokens": opens are audited) or
   * per-sample lifecycle ("lifecycle"; a function decides per request, e.g. only the
   * heatmap's lifecycle metric). Then a restricted run answers only to admins and the
   * users listed for it (403) — one guard for every such route (trajectory-guard.ts).
   */
  trajectories?: TrajectoryKind | ((query: Infer<Q>) => TrajectoryKind | null);
}

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

function gate() {
  return heavyGate(() => ({ ...DEFAULT_GATE, ...serverEnv().heavy }));
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
    let release: Release | undefined;
    try {
      const url = new URL(req.url);
      const auth = opts.auth ?? "member";
      let user: AuthUser | null = null;
      if (auth !== "public") {
        user = await authenticateRequest(req);
        if (!user) throw new ApiError("unauthorized", "sign in or send 'Authorization: Bearer <token>'");
        if (auth === "admin" && user.role !== "admin") throw new ApiError("forbidden", "admin role required");
      }
      const rawQuery: Record<string, string> = Object.fromEntries(url.searchParams.entries());
      const runId = typeof rawQuery.run === "string" ? rawQuery.run : undefined;
      delete rawQuery.run;
      const rawParams = await (routeCtx?.params ?? Promise.resolve({}));
      const { params, query } = parseRequest<Infer<P>, Infer<Q>>(opts.params, rawParams, opts.query, rawQuery);
      const answer = async (): Promise<Response> => {
        const run = (opts.run ?? true) ? await getRunOrThrow(runId) : (undefined as unknown as RunContext);
        const kind = typeof opts.trajectories === "function" ? opts.trajectories(query) : opts.trajectories;
        if (kind) guardTrajectoryRead(run.id, user, kind, params as { rolloutId?: number; sampleIndex?: number } | undefined);
        // What a restart warms first (lib/server/runs/recent.ts): runs signed-in people open
        // (a request the guard refused did not open the run).
        if (run && user) noteRunOpened(getDb(), run.id);
        const result = await handler({ req, url, query, params, user, run });
        if (result instanceof Response) return result;
        const keptResponse = await keptAnswerResponse(result);
        if (keptResponse) return keptResponse;
        if (!release) return jsonResponse(result);
        // A heavy answer is serialised before its slot is released, after a turn of the
        // event loop and in slices, so light requests that arrived while it was computed
        // do not also wait for its MB of JSON (docs/api.md 9.4).
        await yieldToIo();
        return await jsonResponseSliced(result);
      };
      if (opts.cost !== "heavy") return await answer();
      release = await gate().acquire(user ? `user:${user.name}` : "anonymous");
      // The telemetry cache's deferred writes wait until a heavy answer is out (binary-cache.ts).
      return await whileAnswering(answer);
    } catch (err) {
      return toErrorResponse(err);
    } finally {
      release?.();
    }
  };
}
