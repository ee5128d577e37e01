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

const g = globalThis as unknown as { __rlboardWarmup?: Promise<void> };

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
    .filter(([page, file]) => page.startsWith("/api/") && page.endsWith("/route") && !COLD_ROUTES.test(page) && /^app\/[^\0]+\.js$/.test(file))
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
