/**
 * Warm-up at server start (instrumentation.ts; issue #20: the first request after a start
 * must not pay for module loading or opening what a warm-up at start could do). Nothing
 * here reads or writes per-user state, and every step is bounded in count and time.
 *
 *  1. `warmRouteModules` — instantiates the modules of the API routes that opening a run
 *     uses (each route's handler and what it imports: contracts, with-api, stores, readers;
 *     COLD_ROUTES are left out) the way Next does on a route's first request, through the
 *     route entry's own module (`.next/server/app/…/route.js`, the same Node module
 *     instance Next serves from). Pure module loading: no file of any run is read.
 *  2. `warmRuns` — opens what every first request needs and the server keeps anyway: the
 *     SQLite database, the run registry (one scan of the runs roots), and for the runs
 *     people opened last (else the most recently active; `runsToWarm`) their RunContext
 *     (telemetry store, dump reader; globalThis, lib/server/runs/context.ts) with the run
 *     header answered once (`/api/meta`'s computation and topology), which fills the
 *     stores' own caches of partition lists, time range and catalogs (unless that means
 *     reading the run's engine partitions at length: WARMUP_SCAN_MAX_BYTES), the blocks of
 *     the timeline's first screen where the data dir's cache has them (lib/timeline/warm.ts:
 *     the newest 4 h of GPU samples and phases, the default overlay's engine series), the newest
 *     steps' summaries where the data dir's cache has them (`DumpReader.warmFromCache`)
 *     and the newest of those steps' trajectory lanes (what a step view asks with them),
 *     with the JSON text of that step's two answers (kept per process: lib/api/json.ts).
 *  3. `startRequestWarmup` — once the hook has returned, the sign-in page and one request to
 *     each route phase 1 loaded, sent to the server's own address with a bearer token no
 *     server issues (`warmupRequestPaths`, WARMUP_TOKEN: each route answers 401 after the
 *     token lookup, before any run or file is looked at; the page renders its form). The
 *     first request of a route paid ~4–8 ms on this machine for Next's first pass through
 *     its request path — route matching, the route's parameters, `prepare`, the response
 *     stream — and ~5 ms more for the routes' own first settings parse and database open
 *     (Next loads lib/ a second time for the routes: what the hook did above is not
 *     theirs); the first page ~160 ms for React's first server render. Only a request can
 *     take these (#20).
 *     `/api/health` answers once they are done (`requestWarmupSettled`), so a readiness
 *     wait (`npm run serve`, load balancers) sees a server that has paid it.
 *
 * Opt out with RLBOARD_WARMUP=0.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { RunRegistry } from "@/lib/server/runs/registry";
import type { ScannedRun } from "@/lib/server/runs/scan";

/**
 * Runs whose context is opened at start. Each open store stays resident: warming the 4
 * newest runs, which the served bench then did not open, raised its RSS to 353 MB (≤ 330).
 */
export const WARMUP_RUNS = 2;
/**
 * A run header is answered at start only if its engine metric names are kept (or
 * Prometheus-backed) or its engine partitions hold at most this much JSON. A 1024-GPU day
 * without kept names reads 8 GB for them (~50 s); in the background that scan slowed the
 * first request on a fresh data dir 16 s → 65 s. Such a run's first `/api/meta` pays it.
 */
export const WARMUP_SCAN_MAX_BYTES = 256 * 2 ** 20;
/** No new step of a warm-up phase starts after this long. */
export const WARMUP_BUDGET_MS = 3_000;
/** `warmUp()` resolves after this long at the latest; what is left goes on in the background. */
export const WARMUP_AWAIT_MS = 1_500;

export function warmUpEnabled(): boolean {
  return process.env.RLBOARD_WARMUP !== "0";
}

const g = globalThis as unknown as { __rlboardWarmup?: Promise<void>; __rlboardRequestWarmup?: Promise<number> };

/**
 * Both phases, once per process: resolves when they are done or after WARMUP_AWAIT_MS,
 * whichever comes first (never rejects).
 */
export function warmUp(): Promise<void> {
  g.__rlboardWarmup ??= (async () => {
    const start = performance.now();
    const deadline = start + WARMUP_BUDGET_MS;
    await warmRouteModules(deadline);
    await warmRuns(deadline);
    if (performance.now() - start < WARMUP_AWAIT_MS) collectWarmupGarbage();
  })().catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, WARMUP_AWAIT_MS)));
  return Promise.race([g.__rlboardWarmup, cap]).finally(() => clearTimeout(timer));
}

/**
 * A full garbage collection while requests are still held (the hook has not returned): the
 * warm-up allocates tens of MB (modules, blocks, answers), and V8 otherwise finished that
 * marking in the first request — `/api/meta` paid ~35 ms of a Mark-Compact started by the
 * warm-up (`--trace-gc`; docs/bench.md "2026-12-06 d"). Only where the server runs with
 * `--expose-gc` (`startNextServer` adds it); elsewhere a no-op.
 */
export function collectWarmupGarbage(): void {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc === "function") (gc as () => void)();
}

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

interface RouteEntry {
  routeModule?: {
    ensureUserland?: () => Promise<void>;
    loadManifests?: (srcPage: string, projectDir: string) => unknown;
    relativeProjectDir?: string;
  };
}

/** The build's output folder: next.config.ts's distDir (RLBOARD_DIST_DIR or `.next`) under the app root. */
function distDir(): string {
  return path.resolve(/* turbopackIgnore: true */ process.cwd(), process.env.RLBOARD_DIST_DIR ?? ".next");
}

/** The routes `warmRouteModules` loaded in this process, in the order it loaded them (phase 3 asks them). */
const loadedRoutes = new Set<string>();

/**
 * Load every API route's module graph (Next 16's route entries load their handler module
 * lazily, on the first request: `routeModule.ensureUserland`). Routes are taken from the
 * build's app-paths manifest; a build without one, or an entry of another shape, is
 * skipped — the route then loads on its first request, as without a warm-up.
 * Returns how many routes were loaded.
 */
export async function warmRouteModules(deadline = performance.now() + WARMUP_BUDGET_MS): Promise<number> {
  const server = path.join(/* turbopackIgnore: true */ distDir(), "server");
  let manifest: Record<string, string>;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(/* turbopackIgnore: true */ server, "app-paths-manifest.json"), "utf8")) as Record<string, string>;
  } catch {
    return 0;
  }
  const req = createRequire(path.join(/* turbopackIgnore: true */ server, "warmup.js"));
  // The first screen's routes first: a request arriving meanwhile finds them loaded.
  const first = ["/api/meta/route", "/api/runs/route", "/api/timeline/topology/route"];
  const routes = Object.entries(manifest)
    .filter(([page, file]) => isWarmRoute(page) && /^app\/[^\0]+\.js$/.test(file))
    .sort(([a], [b]) => rank(a, first) - rank(b, first) || a.localeCompare(b));
  let n = 0;
  for (const [page, file] of routes) {
    if (performance.now() > deadline) break;
    try {
      const entry = req(path.join(/* turbopackIgnore: true */ server, file)) as RouteEntry;
      const mod = entry.routeModule;
      if (typeof mod?.ensureUserland === "function") {
        await mod.ensureUserland();
        n++;
        loadedRoutes.add(page);
        loadRouteManifests(mod, page);
      }
    } catch {
      /* this route loads on its first request instead */
    }
    await yieldToIo();
  }
  return n;
}

/**
 * The manifests a route's first request reads (Next's `prepare` → `loadManifests`): the
 * shared JSON manifests, and the route's own client-reference manifest, which Next
 * evaluates in a new `vm` context — 1–4 ms per route on this machine, paid by the first
 * request of every route (#20). Next caches them by path, so loading them here with the
 * project dir Next computes (cwd + the route's relativeProjectDir) spares that request.
 * A Next without this method, or a different signature, only makes this a no-op.
 */
function loadRouteManifests(mod: NonNullable<RouteEntry["routeModule"]>, page: string): void {
  if (typeof mod.loadManifests !== "function") return;
  try {
    mod.loadManifests(page, path.join(/* turbopackIgnore: true */ process.cwd(), mod.relativeProjectDir ?? ""));
  } catch {
    /* the route's first request loads them */
  }
}

/**
 * Routes left to load on their first request: rarely asked, or not part of opening a run
 * (each loaded module graph stays resident; the RSS target of #20 is 330 MB).
 */
const COLD_ROUTES = /^\/api\/(?:auth|export|compare|health|\[\.\.\.unknown\]|rollout\/search|rollout\/\[rolloutId\]\/(?:drift|traces|sample\/\[sampleIndex\]\/trace))\//;

/** An API route page (`/api/…/route`) phases 1 and 3 warm: every one but COLD_ROUTES. */
export function isWarmRoute(page: string): boolean {
  return page.startsWith("/api/") && page.endsWith("/route") && !COLD_ROUTES.test(page);
}

function rank(page: string, first: readonly string[]): number {
  const i = first.indexOf(page);
  return i < 0 ? first.length : i;
}

/**
 * The runs a start opens: the ones signed-in people opened last (lib/server/runs/recent.ts),
 * then the most recently active, `n` in all; runs gone from the roots since are skipped.
 */
export function runsToWarm(registry: Pick<RunRegistry, "find" | "list">, recent: readonly string[], n = WARMUP_RUNS): ScannedRun[] {
  const picked: ScannedRun[] = [];
  const add = (run: ScannedRun | null) => {
    if (run && picked.length < n && !picked.some((p) => p.id === run.id)) picked.push(run);
  };
  for (const id of recent) add(registry.find(id));
  for (const run of registry.list()) add(run);
  return picked;
}

/**
 * Open the database, the registry and the runs to warm; answer their header once (unless
 * its engine names mean reading more than `scanMaxBytes`). Returns the runs opened.
 */
export async function warmRuns(deadline = performance.now() + WARMUP_BUDGET_MS, scanMaxBytes = WARMUP_SCAN_MAX_BYTES): Promise<number> {
  const [
    { getDb },
    { getRegistry, getRunOrThrow },
    { recentlyOpenedRuns },
    { engineNamesAtHand, getMeta, getTopology },
    { warmTimelineWindow },
    { getRolloutSummary, getRolloutTrajectories, storeTimeline },
    { keepAnswerText },
  ] = await Promise.all([
    import("@/lib/server/db"),
    import("@/lib/server/runs/context"),
    import("@/lib/server/runs/recent"),
    import("@/lib/timeline/api"),
    import("@/lib/timeline/warm"),
    import("@/lib/rollout"),
    import("@/lib/api/json"),
  ]);
  const runs = runsToWarm(getRegistry(), recentlyOpenedRuns(getDb()));
  let n = 0;
  for (const run of runs) {
    if (performance.now() > deadline) break;
    try {
      const ctx = await getRunOrThrow(run.id);
      const header = (await engineNamesAtHand(ctx.store, scanMaxBytes)) ? getMeta(ctx) : null;
      await Promise.all([header, getTopology(ctx.store)]);
      // The timeline's first screen (newest 4 h: GPU lanes, phases, default overlay), from
      // the data dir's cache only — never parsed here.
      if (performance.now() < deadline) await warmTimelineWindow(ctx.store);
      // The newest steps' summaries, where the data dir's cache has them: what a step view
      // and its trajectories ask first. Never built here (a 2048-sample step's join takes
      // seconds, and would compete with the first requests of a fresh data dir).
      const steps = await ctx.dumps.warmFromCache();
      // The step view asks its trajectories with its summary: the newest loaded step's
      // (reads the trajectory events of its anatomy window, as its first request would).
      // Both answers are kept frozen; their JSON text is written here too (lib/api/json.ts).
      if (steps.length > 0 && performance.now() < deadline) {
        const newest = steps[0]!;
        await keepAnswerText(await getRolloutSummary(ctx.dumps, newest, false));
        await keepAnswerText(await getRolloutTrajectories(ctx.dumps, storeTimeline(ctx.store), newest));
      }
      n++;
    } catch {
      /* a run that cannot be read answers its error to the request that asks for it */
    }
    await yieldToIo();
  }
  return n;
}

/**
 * A route page of the build (`/api/rollout/[rolloutId]/summary/route`) as a path to ask
 * (`/api/rollout/0/summary`): each dynamic segment is 0. Null for a catch-all segment.
 */
export function routeRequestPath(page: string): string | null {
  if (!page.endsWith("/route")) return null;
  const p = page.slice(0, -"/route".length).replace(/\[[A-Za-z_][A-Za-z0-9_]*\]/g, "0");
  return p.includes("[") ? null : p;
}

/**
 * What phase 3 asks: WARMUP_PAGES, then one request to each API route `warmRouteModules`
 * loaded (the first screen's first), dynamic segments 0. Each route's first request paid
 * its own pass (Next prepares every route entry on its first request: parameters,
 * manifests): asking only one route of each kind left the step's trajectories at 16.8 ms
 * against 12.1 with all asked. The routes answer 401 in withApi (WARMUP_TOKEN names no
 * one) before their query is parsed or a run is opened, so nothing is read, counted or
 * recorded (no user, no run, no audit) — app/api/warmup-requests.test.ts holds every
 * such route, and the pages, to that.
 */
export function warmupRequestPaths(): string[] {
  return [...WARMUP_PAGES, ...[...loadedRoutes].map(routeRequestPath).filter((p): p is string => p !== null)];
}

/**
 * Pages phase 3 asks first: the sign-in page, the one page that renders without a session
 * (200, the form; it reads nothing and records nothing). Its render is the server's first
 * pass through React's server rendering and the page path: the timeline's HTML, first
 * page after a restart, 410 → 245 ms (55 once warm). The other pages need a session — the
 * proxy sends a request without one to /login — so their own first render is left.
 */
export const WARMUP_PAGES: readonly string[] = ["/login"];

/**
 * The bearer token phase 3 sends: never one this server issues (its tokens are `rlb_` and
 * 43 base64url characters, lib/server/auth/users.ts createToken), so the lookup finds no
 * one — what any client with a wrong token gets — but the request takes the path an API
 * client's does (settings, database, token hash and lookup).
 */
export const WARMUP_TOKEN = "rlboard-warm-up";
/** Each warm-up request gives up after this long (a server that cannot reach itself). */
export const WARMUP_REQUEST_TIMEOUT_MS = 2_000;
/** Phase 3 asks nothing after this long, and `/api/health` waits for it at most this long. */
export const WARMUP_SETTLE_CAP_MS = 5_000;

/**
 * The address the server answers on, for requests to itself: the origin `next start`
 * records once it listens (`__NEXT_PRIVATE_ORIGIN`, e.g. http://127.0.0.1:7799 or
 * http://localhost:3000 when bound to every interface), else the loopback address at
 * its PORT. Null when neither is known, or where the server speaks https (its certificate
 * would not name the loopback address).
 */
export function ownOrigin(env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const recorded = env.__NEXT_PRIVATE_ORIGIN;
  if (recorded) {
    try {
      const u = new URL(recorded);
      return u.protocol === "http:" ? u.origin : null;
    } catch {
      /* fall back to the port */
    }
  }
  const port = Number(env.PORT);
  return Number.isInteger(port) && port > 0 && port < 65536 ? `http://127.0.0.1:${port}` : null;
}

/**
 * Ask each path once, one after the other, with WARMUP_TOKEN; any answer counts (the
 * request went through the server's request path). Resolves with how many were answered;
 * never rejects. A path that does not answer within `timeoutMs` is given up, and none is
 * asked after `budgetMs`.
 */
export async function warmRequests(
  origin: string,
  paths: readonly string[],
  timeoutMs = WARMUP_REQUEST_TIMEOUT_MS,
  budgetMs = WARMUP_SETTLE_CAP_MS,
): Promise<number> {
  const deadline = performance.now() + budgetMs;
  let answered = 0;
  for (const p of paths) {
    if (performance.now() > deadline) break;
    try {
      const res = await fetch(origin + p, {
        headers: { authorization: `Bearer ${WARMUP_TOKEN}` },
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "manual",
        cache: "no-store",
      });
      await res.arrayBuffer();
      answered++;
    } catch {
      /* unreachable or too slow: the first real request of that kind pays the pass */
    }
  }
  return answered;
}

/**
 * Phase 3, once per process, called by the hook before it returns: its first request is
 * sent at once and waits in Next's queue until the hook has returned; the others follow one
 * by one. Does nothing without a known origin (or with nothing to ask).
 */
export function startRequestWarmup(env: Readonly<Record<string, string | undefined>> = process.env, paths: readonly string[] = warmupRequestPaths()): void {
  if (g.__rlboardRequestWarmup) return;
  const origin = ownOrigin(env);
  // No full collection after them (as the hook does after its own work): one here made the
  // next first requests slower (topology 10.9 → 20.7 ms), not faster.
  g.__rlboardRequestWarmup = origin && paths.length > 0 ? warmRequests(origin, paths) : Promise.resolve(0);
}

/** Phase 3 runs that are done: health stops waiting on them (no race, no timer). */
const settledWarmups = new WeakSet<Promise<number>>();

/**
 * Resolves once phase 3 is done (at once where none was started, e.g. RLBOARD_WARMUP=0 or
 * outside `next start`), and after `capMs` at the latest.
 */
export function requestWarmupSettled(capMs = WARMUP_SETTLE_CAP_MS): Promise<void> {
  const pending = g.__rlboardRequestWarmup;
  if (!pending || settledWarmups.has(pending)) return Promise.resolve();
  void pending.then(() => settledWarmups.add(pending));
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, capMs)));
  return Promise.race([pending.then(() => undefined), cap]).finally(() => clearTimeout(timer));
}
