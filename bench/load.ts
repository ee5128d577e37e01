/**
 * Load bench (docs/api.md "Limits"): light queries must keep answering while 50 clients
 * hammer the expensive ones. Three processes, all on 127.0.0.1:
 *
 *  - `server`: a node:http server wrapping the real route handlers (withApi, auth, the
 *    heavy-query gate, the bench run), a fresh user database with one token per client
 *    group;
 *  - `hammer`: 50 clients looping over heavy queries (4 h windows: 32-lane GPU series as
 *    JSON, the util carpet, 64-lane phases, the fleet overview) without pause; a refused
 *    (503 busy) request is re-sent after its `Retry-After` (1 s), as the UI does;
 *  - the caller (bench/index.ts) times `/api/health` and `/api/meta` one at a time.
 *
 * Run: `node --conditions=react-server --import tsx bench/load.ts <server|hammer> '<json>'`
 * (`react-server` makes the `server-only` marker importable outside Next).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import path from "node:path";

const APP_ROOT = path.resolve(import.meta.dirname, "..");

export interface LoadOptions {
  run: string;
  /** Persistent data dir of the load server: its cache/ survives between bench runs. */
  dataDir: string;
  t0: number;
  t1: number;
  clients: number;
  users: number;
  seconds: number;
  /** Gate limits of the server (default: the product's defaults). */
  heavy?: { maxRunning: number; maxPerUser: number; maxQueue: number };
}

export interface LoadResult {
  baseline: { health: number[]; meta: number[] };
  loaded: { health: number[]; meta: number[] };
  heavy: { ok: number; busy: number; other: number; mb: number };
  /** The server's own view: event-loop delay and the slowest answer per route (ms). */
  server: ServerStats;
}

interface ServerStats {
  loopP99: number;
  loopMax: number;
  slowest: Record<string, number>;
}

// ---------------------------------------------------------------------------------------
// server role

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

async function serve(o: { run: string; dataDir: string; users: number; heavy?: LoadOptions["heavy"] }): Promise<void> {
  const { parseServerEnv, setServerEnvForTests } = await import("@/lib/env");
  const { getDb } = await import("@/lib/server/db");
  const { addUser, createToken } = await import("@/lib/server/auth/users");
  fs.mkdirSync(o.dataDir, { recursive: true });
  for (const f of fs.readdirSync(o.dataDir)) if (f.startsWith("rlboard.db")) fs.rmSync(path.join(o.dataDir, f));
  // The gate limits a real server would run with (RLBOARD_MAX_HEAVY…), unless the caller set them.
  setServerEnvForTests({ dataDir: o.dataDir, dumpDetails: o.run, heavy: o.heavy ?? parseServerEnv(process.env).heavy });
  const db = getDb();
  const tokens: string[] = [];
  for (let i = 0; i < o.users; i++) {
    await addUser(db, `load-${i}`, "password-123", "member");
    tokens.push(createToken(db, `load-${i}`));
  }
  const routes: Record<string, Handler> = {
    "/api/health": (await import("@/app/api/health/route")).GET,
    "/api/meta": (await import("@/app/api/meta/route")).GET,
    "/api/timeline/gpu": (await import("@/app/api/timeline/gpu/route")).GET,
    "/api/timeline/heatmap": (await import("@/app/api/timeline/heatmap/route")).GET,
    "/api/timeline/phases": (await import("@/app/api/timeline/phases/route")).GET,
    "/api/timeline/fleet": (await import("@/app/api/timeline/fleet/route")).GET,
  };
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const slowest: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/bench/stats") {
      const stats: ServerStats = { loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6, slowest };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
      return;
    }
    if (url.pathname === "/bench/reset") {
      loop.reset();
      for (const k of Object.keys(slowest)) delete slowest[k];
      res.writeHead(204).end();
      return;
    }
    const handler = routes[url.pathname];
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    const headers = new Headers();
    if (req.headers.authorization) headers.set("authorization", req.headers.authorization);
    const t = performance.now();
    handler(new Request(url, { headers }), { params: Promise.resolve({}) })
      .then(async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        const key = `${url.pathname} ${r.status}`;
        slowest[key] = Math.max(slowest[key] ?? 0, performance.now() - t);
        res.writeHead(r.status, Object.fromEntries(r.headers.entries()));
        res.end(body);
      })
      .catch(() => res.writeHead(500).end());
  });
  server.keepAliveTimeout = 30_000;
  loop.enable();
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ port: addr.port, tokens })}\n`);
  });
}

// ---------------------------------------------------------------------------------------
// hammer role

async function hammer(o: { port: number; tokens: string[]; clients: number; seconds: number; t0: number; t1: number }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.clients });
  const w = `t0=${o.t0}&t1=${o.t1}`;
  const urls = [
    `/api/timeline/gpu?${w}&lanes=g:0-31&max_points=4000`,
    `/api/timeline/heatmap?${w}&metric=util`,
    `/api/timeline/phases?${w}`,
    `/api/timeline/fleet?${w}`,
  ];
  const out = { ok: 0, busy: 0, other: 0, bytes: 0 };
  const end = Date.now() + o.seconds * 1000;
  const client = async (i: number) => {
    const token = o.tokens[i % o.tokens.length]!;
    for (let k = i; Date.now() < end; k++) {
      const { status, bytes } = await get(agent, o.port, urls[k % urls.length]!, token);
      out.bytes += bytes;
      if (status === 200) out.ok++;
      else if (status === 503) {
        out.busy++;
        await new Promise((r) => setTimeout(r, 1000)); // Retry-After: 1, as every client of ours does
      } else out.other++;
    }
  };
  await Promise.all(Array.from({ length: o.clients }, (_, i) => client(i)));
  agent.destroy();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function get(agent: http.Agent, port: number, p: string, token: string | null): Promise<{ status: number; bytes: number; ms: number }> {
  const t = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: p, agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t }));
      res.on("error", () => resolve({ status: 0, bytes, ms: performance.now() - t }));
    });
    req.setTimeout(60_000, () => req.destroy());
    req.on("error", () => resolve({ status: 0, bytes: 0, ms: performance.now() - t }));
  });
}

// ---------------------------------------------------------------------------------------
// caller side (bench/index.ts)

function child(role: string, arg: unknown): ChildProcess {
  return spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", path.join(APP_ROOT, "bench", "load.ts"), role, JSON.stringify(arg)], {
    cwd: APP_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function firstLine(p: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("load bench: child did not answer in time")), timeoutMs);
    p.stdout!.on("data", (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(buf.slice(0, nl));
      }
    });
    p.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`load bench: child exited (${code}) before answering`));
    });
  });
}

/** Time light queries one after another, every `gapMs`, for `seconds` (or until `stop()`). */
async function probeLight(port: number, token: string, seconds: number, gapMs = 20): Promise<{ health: number[]; meta: number[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out = { health: [] as number[], meta: [] as number[] };
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const isMeta = i % 2 === 1;
    const r = await get(agent, port, isMeta ? "/api/meta" : "/api/health", isMeta ? token : null);
    if (r.status === 200) (isMeta ? out.meta : out.health).push(r.ms);
    await new Promise((res) => setTimeout(res, gapMs));
  }
  agent.destroy();
  return out;
}

export async function benchLoad(o: LoadOptions, log: (s: string) => void): Promise<LoadResult> {
  const server = child("server", { run: o.run, dataDir: o.dataDir, users: o.users, heavy: o.heavy });
  try {
    const { port, tokens } = JSON.parse(await firstLine(server, 60_000)) as { port: number; tokens: string[] };
    // Warm: open the run, read each heavy answer once (fills caches, JITs the paths).
    const agent = new http.Agent({ keepAlive: true });
    const w = `t0=${o.t0}&t1=${o.t1}`;
    for (const p of [`/api/meta`, `/api/timeline/gpu?${w}&lanes=g:0-31&max_points=4000`, `/api/timeline/heatmap?${w}&metric=util`, `/api/timeline/phases?${w}`, `/api/timeline/fleet?${w}`]) {
      const r = await get(agent, port, p, tokens[0]!);
      if (r.status !== 200) throw new Error(`load bench: warm-up ${p} answered ${r.status}`);
    }
    agent.destroy();
    const baseline = await probeLight(port, tokens[0]!, 3);
    await get(new http.Agent(), port, "/bench/reset", null);
    log(`load: ${o.clients} clients × ${o.seconds} s of heavy queries, ${o.users} users`);
    const h = child("hammer", { port, tokens, clients: o.clients, seconds: o.seconds, t0: o.t0, t1: o.t1 });
    const heavyP = firstLine(h, (o.seconds + 120) * 1000);
    await new Promise((r) => setTimeout(r, 1000)); // let the clients pile up first
    const loaded = await probeLight(port, tokens[0]!, Math.max(1, o.seconds - 2));
    const heavy = JSON.parse(await heavyP) as { ok: number; busy: number; other: number; bytes: number };
    const stats = await new Promise<ServerStats>((resolve, reject) => {
      http.get({ host: "127.0.0.1", port, path: "/bench/stats" }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve(JSON.parse(text) as ServerStats));
      }).on("error", reject);
    });
    return { baseline, loaded, heavy: { ok: heavy.ok, busy: heavy.busy, other: heavy.other, mb: heavy.bytes / 1e6 }, server: stats };
  } finally {
    server.kill();
  }
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

// ---------------------------------------------------------------------------------------

const [role, arg] = process.argv.slice(2);
if (role === "server") void serve(JSON.parse(arg!) as Parameters<typeof serve>[0]);
else if (role === "hammer") void hammer(JSON.parse(arg!) as Parameters<typeof hammer>[0]).then(() => process.exit(0));
