/**
 * Starting the Next server as a child process: build when no build exists, refuse a busy
 * port with one clear line, wait for /api/health, forward SIGINT/SIGTERM. Used by
 * `serve`, `demo`, the e2e runner and the bench.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { CliError } from "./common";
import { hugePagesPay } from "./page-probe";

export const APP_ROOT = path.resolve(import.meta.dirname, "..");
const NEXT_BIN = path.join(APP_ROOT, "node_modules", "next", "dist", "bin", "next");

export function distDir(): string {
  return path.join(APP_ROOT, process.env.RLBOARD_DIST_DIR ?? ".next");
}

export function hasBuild(): boolean {
  return fs.existsSync(path.join(distDir(), "BUILD_ID"));
}

export async function buildIfNeeded(log: (s: string) => void = (s) => process.stderr.write(s + "\n")): Promise<void> {
  if (hasBuild()) return;
  log("rlboard: no build found, building the app once (about a minute)…");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, "build"], {
      cwd: APP_ROOT,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new CliError(`next build failed (exit ${code})`))));
    child.on("error", reject);
  });
}

export function checkPortFree(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") reject(new CliError(`port ${port} on ${host} is already in use (pick another with --port)`));
      else if (err.code === "EADDRNOTAVAIL") reject(new CliError(`cannot bind ${host}: no such address on this machine`));
      else reject(new CliError(`cannot listen on ${host}:${port}: ${err.message}`));
    });
    srv.listen(port, host, () => srv.close(() => resolve()));
  });
}

/**
 * `--public-url URL` (or AUTH_URL): the address users open, e.g. https://dash.lab.org —
 * http(s), a host, no user info, query or fragment, and no path (rlboard is served at the
 * root of its host), not a loopback IP (localhost instead). Returns the origin, which
 * becomes AUTH_URL of the server process.
 */
export function parsePublicUrl(raw: string, flag = "--public-url"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`${flag} '${raw}': not a URL (expected e.g. https://dash.lab.example)`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new CliError(`${flag} '${raw}': must start with https:// or http://`);
  if (!url.hostname) throw new CliError(`${flag} '${raw}': no host`);
  if (url.username || url.password) throw new CliError(`${flag} '${raw}': must not hold a user name or password`);
  if (url.search || url.hash || /[?#]/.test(raw)) throw new CliError(`${flag} '${raw}': must not have a query or fragment`);
  if (url.pathname !== "/") throw new CliError(`${flag} '${raw}': must not have a path (rlboard is served at the root of its host)`);
  // Auth.js rebuilds AUTH_URL requests as NextRequests, whose URL says "localhost" for
  // these: the OIDC callback would not be the redirect_uri the authorize step named.
  if (/^(?:127(?:\.\d{1,3}){3}|\[::1\])$/.test(url.hostname)) {
    throw new CliError(`${flag} '${raw}': use ${url.protocol}//localhost${url.port ? `:${url.port}` : ""} for a local address (and open that)`);
  }
  return url.origin;
}

export interface ServerEnvOptions {
  dataDir: string;
  dumpDetails?: string;
  runsRoots?: string[];
  follow?: boolean;
  tensorLru?: number;
  lowMfuThreshold?: number;
  useUtilizationOverview?: boolean;
  /** A reverse proxy in front sets X-Forwarded-For/-Proto/-Host (docs/deploy.md). */
  trustProxy?: boolean;
  /** The origin from parsePublicUrl. */
  publicUrl?: string;
}

export function serverEnvVars(o: ServerEnvOptions): Record<string, string> {
  const env: Record<string, string> = { RLBOARD_DATA_DIR: o.dataDir, NEXT_TELEMETRY_DISABLED: "1" };
  if (o.dumpDetails) env.RLBOARD_DUMP_DETAILS = o.dumpDetails;
  if (o.runsRoots?.length) env.RLBOARD_RUNS_ROOTS = o.runsRoots.join(path.delimiter);
  if (o.follow) env.RLBOARD_FOLLOW = "1";
  if (o.tensorLru !== undefined) env.RLBOARD_TENSOR_LRU = String(o.tensorLru);
  if (o.lowMfuThreshold !== undefined) env.RLBOARD_LOW_MFU_THRESHOLD = String(o.lowMfuThreshold);
  if (o.useUtilizationOverview) env.RLBOARD_USE_UTILIZATION_OVERVIEW = "1";
  if (o.trustProxy) env.RLBOARD_TRUST_PROXY = "1";
  // Auth.js reads AUTH_URL itself too (lib/server/auth/nextauth.ts): one setting for both.
  if (o.publicUrl) env.AUTH_URL = o.publicUrl;
  return env;
}

/**
 * The environment of a server process: ours, then `env`, and glibc's malloc told whether to
 * put its large chunks on transparent huge pages (`glibc.malloc.hugetlb=1` or `=0`): the
 * server reads column blocks and cache files of tens of MB into fresh buffers, and which
 * page size faults them in faster depends on the machine — measured once per boot
 * (cli/page-probe.ts; the 1024-GPU fleet view's first request gained a quarter with huge
 * pages on one VM and lost a third on another, docs/bench.md "12-06 c", "12-07 d"). glibc
 * older than 2.35 and other C libraries ignore the setting; a GLIBC_TUNABLES that already
 * sets `glibc.malloc.hugetlb` is left as it is, other tunables are kept.
 */
export function serverProcessEnv<E extends Record<string, string | undefined>>(
  base: E,
  env: Record<string, string>,
  hugePages: () => boolean = hugePagesPay,
): E & { GLIBC_TUNABLES: string } {
  const tunables = env.GLIBC_TUNABLES ?? base.GLIBC_TUNABLES ?? "";
  if (/(?:^|:)glibc\.malloc\.hugetlb=/.test(tunables)) return { ...base, ...env, GLIBC_TUNABLES: tunables };
  const setting = `glibc.malloc.hugetlb=${hugePages() ? 1 : 0}`;
  return { ...base, ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${setting}` : setting };
}

/** `--compress` / RLBOARD_COMPRESS: gzip the server's answers, or leave that to a proxy. */
export const COMPRESS_SETTINGS = ["auto", "on", "off"] as const;

/** An address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/**
 * Whether a server bound to `host` compresses its answers (docs/deploy.md "Compression").
 * `auto` (the default): not on a loopback address. Its clients there are a proxy on the
 * same machine — which compresses for the remote users, at a level it is told — or a
 * browser on it, and Next's gzip (zlib level 6, per answer, never kept) would cost the
 * server more CPU than the rest of a request: a 26 KB token window 2.1–2.6 ms of CPU
 * uncompressed, 4.5–5.5 ms gzipped (docs/bench.md "2026-12-06 d"). On any other address
 * remote browsers may connect directly, so answers are gzipped.
 */
export function resolveCompress(setting: string | undefined, host: string, flag = "RLBOARD_COMPRESS"): "on" | "off" {
  const s = (setting ?? "auto").trim().toLowerCase() || "auto";
  if (!(COMPRESS_SETTINGS as readonly string[]).includes(s)) throw new CliError(`${flag} must be auto, on or off, got '${setting}'`);
  if (s === "auto") return isLoopbackHost(host) ? "off" : "on";
  return s as "on" | "off";
}

export interface RunningServer {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

export async function startNextServer(opts: {
  port: number;
  host: string;
  env: Record<string, string>;
  quiet?: boolean;
  timeoutMs?: number;
}): Promise<RunningServer> {
  // --expose-gc: the warm-up collects its own garbage before the first request is let in
  // (lib/server/warmup.ts collectWarmupGarbage); nothing else calls gc().
  const child = spawn(process.execPath, ["--expose-gc", NEXT_BIN, "start", "-p", String(opts.port), "-H", opts.host], {
    cwd: APP_ROOT,
    stdio: ["ignore", opts.quiet ? "ignore" : "inherit", "inherit"],
    env: serverProcessEnv(process.env, {
      ...opts.env,
      RLBOARD_COMPRESS: resolveCompress(opts.env.RLBOARD_COMPRESS ?? process.env.RLBOARD_COMPRESS, opts.host),
    }),
  });
  const url = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const state: { exited: number | null } = { exited: null };
  child.once("exit", (code) => (state.exited = code ?? 1));
  while (Date.now() < deadline) {
    if (state.exited !== null) throw new CliError(`the server exited during start (exit ${state.exited})`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) return { child, url, stop };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new CliError(`the server did not answer ${url}/api/health within ${Math.round((opts.timeoutMs ?? 60_000) / 1000)} s`);
}
