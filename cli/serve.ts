/**
 * `npm run serve -- --dump-details DIR | --runs-root DIR [--runs-root DIR…]
 *   [--port 7788] [--host 127.0.0.1] [--data-dir ./data] [--follow] [--tensor-lru 2]
 *   [--low-mfu-threshold 0.15] [--use-utilization-overview] [--trust-proxy] [--public-url URL]
 *   [--compress auto|on|off]
 *   [--run-logs RUN_ID=GLOB…] [--alert-webhook URL…]
 *   [--prometheus URL [--prometheus-run RUN_ID=SELECTOR…]]`
 * Validates everything before starting, so a typo is one clear line and a non-zero exit.
 */
import fs from "node:fs";
import path from "node:path";
import { openDatabase } from "@/lib/server/db";
import { ensureFirstAdmin } from "@/lib/server/auth/users";
import { parseSelectorArg } from "@/lib/prometheus/selector";
import { CliError, fail, parseCli, resolveDataDir } from "./common";
import { buildIfNeeded, checkPortFree, isLoopbackHost, parsePublicUrl, resolveCompress, serverEnvVars, startNextServer } from "./server-process";

const HELP = `usage: npm run serve -- (--dump-details DIR | --runs-root DIR [--runs-root DIR ...])
  [--port 7788] [--host 127.0.0.1] [--data-dir ./data] [--follow]
  [--tensor-lru 2] [--low-mfu-threshold 0.15] [--use-utilization-overview]
  [--trust-proxy] [--public-url https://dash.lab.example]   (behind a reverse proxy: docs/deploy.md)
  [--compress auto|on|off]   (gzip answers; auto: off on a loopback --host, where the proxy compresses)
  [--run-logs RUN_ID=GLOB ...] [--alert-webhook URL ...]   (run health: docs/api.md 9.5)
  [--prometheus URL [--prometheus-run RUN_ID=SELECTOR ...]]   (engine series from Prometheus: docs/collector.md)`;

function requireDir(flag: string, dir: string): string {
  const abs = path.resolve(dir);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    throw new CliError(`${flag} ${dir}: no such directory`);
  }
  if (!st.isDirectory()) throw new CliError(`${flag} ${dir}: not a directory`);
  return abs;
}

function intFlag(name: string, value: string | undefined, def: number, min: number, max: number): number {
  if (value === undefined) return def;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new CliError(`--${name} must be an integer in [${min}, ${max}], got '${value}'`);
  }
  return Number(value);
}

/** `--run-logs RUN_ID=GLOB` and `--alert-webhook URL` (docs/api.md 9.5) → the server's env. */
export function healthEnvVars(runLogs: readonly string[], webhooks: readonly string[]): Record<string, string> {
  for (const r of runLogs)
    if (!/^[^=\n]+=[^\n]+$/.test(r)) throw new CliError(`--run-logs must be RUN_ID=GLOB (ids as GET /api/runs lists them), got '${r}'`);
  for (const u of webhooks) {
    let ok = false;
    try {
      ok = /^https?:$/.test(new URL(u).protocol) && !/\s/.test(u);
    } catch {
      ok = false;
    }
    if (!ok) throw new CliError(`--alert-webhook must be an http(s) URL, got '${u}'`);
  }
  const env: Record<string, string> = {};
  if (runLogs.length) env.RLBOARD_RUN_LOGS = runLogs.join("\n");
  if (webhooks.length) env.RLBOARD_ALERT_WEBHOOKS = webhooks.join("\n");
  return env;
}

/**
 * `--prometheus URL` and `--prometheus-run RUN_ID=SELECTOR` (docs/collector.md "Serving
 * metrics from Prometheus") → the server's env; every selector is parsed here, so a typo
 * stops the start with one line.
 */
export function prometheusEnvVars(url: string | undefined, runs: readonly string[]): Record<string, string> {
  if (url === undefined) {
    if (runs.length) throw new CliError("--prometheus-run needs --prometheus URL (the Prometheus that holds the series)");
    return {};
  }
  let ok = false;
  try {
    ok = /^https?:$/.test(new URL(url).protocol) && !/\s/.test(url);
  } catch {
    ok = false;
  }
  if (!ok) throw new CliError(`--prometheus must be an http(s) URL such as http://127.0.0.1:9090, got '${url}'`);
  for (const r of runs) {
    const i = r.indexOf("=");
    if (i <= 0 || r.includes("\n")) throw new CliError(`--prometheus-run must be RUN_ID=SELECTOR (ids as GET /api/runs lists them), got '${r}'`);
    try {
      parseSelectorArg(r.slice(i + 1));
    } catch (err) {
      throw new CliError(`--prometheus-run ${r}: ${(err as Error).message}`);
    }
  }
  const env: Record<string, string> = { RLBOARD_PROMETHEUS_URL: url };
  if (runs.length) env.RLBOARD_PROMETHEUS_RUNS = runs.join("\n");
  return env;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values } = parseCli(argv, {
    "dump-details": { type: "string" },
    "runs-root": { type: "string", multiple: true },
    port: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    "data-dir": { type: "string" },
    follow: { type: "boolean", default: false },
    "tensor-lru": { type: "string" },
    "low-mfu-threshold": { type: "string" },
    "use-utilization-overview": { type: "boolean", default: false },
    "trust-proxy": { type: "boolean", default: false },
    "public-url": { type: "string" },
    compress: { type: "string" },
    "run-logs": { type: "string", multiple: true },
    "alert-webhook": { type: "string", multiple: true },
    prometheus: { type: "string" },
    "prometheus-run": { type: "string", multiple: true },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) {
    process.stdout.write(HELP + "\n");
    return;
  }
  try {
    const roots = values["runs-root"] ?? [];
    if (values["dump-details"] && roots.length) throw new CliError("use either --dump-details or --runs-root, not both");
    if (!values["dump-details"] && !roots.length) throw new CliError(`nothing to serve: pass --dump-details DIR or --runs-root DIR\n${HELP}`);
    const dumpDetails = values["dump-details"] ? requireDir("--dump-details", values["dump-details"]) : undefined;
    const runsRoots = roots.map((r) => requireDir("--runs-root", r));
    const port = intFlag("port", values.port, 7788, 1, 65535);
    const tensorLru = intFlag("tensor-lru", values["tensor-lru"], 2, 1, 64);
    const mfu = values["low-mfu-threshold"];
    if (mfu !== undefined && !(Number(mfu) >= 0 && Number(mfu) <= 1)) throw new CliError(`--low-mfu-threshold must be in [0, 1], got '${mfu}'`);
    const host = values.host;
    // AUTH_URL from the environment is the same setting; it reaches the server either way.
    const rawPublicUrl = values["public-url"] ?? process.env.AUTH_URL;
    const publicUrl = rawPublicUrl ? parsePublicUrl(rawPublicUrl, values["public-url"] ? "--public-url" : "AUTH_URL") : undefined;
    const trustProxy = values["trust-proxy"] || /^(1|true|yes|on)$/i.test(process.env.RLBOARD_TRUST_PROXY ?? "");
    const compress = resolveCompress(values.compress ?? process.env.RLBOARD_COMPRESS, host, values.compress !== undefined ? "--compress" : "RLBOARD_COMPRESS");
    const healthEnv = healthEnvVars(values["run-logs"] ?? [], values["alert-webhook"] ?? []);
    const promEnv = prometheusEnvVars(values.prometheus, values["prometheus-run"] ?? []);
    const dataDir = resolveDataDir(values["data-dir"]);
    try {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.accessSync(dataDir, fs.constants.W_OK);
    } catch {
      throw new CliError(`--data-dir ${dataDir}: cannot create or write it`);
    }
    await checkPortFree(port, host);

    const db = openDatabase(dataDir);
    const admin = await ensureFirstAdmin(db);
    db.close();
    if (admin) {
      // Printed once, here only: it is not stored anywhere in clear text.
      process.stdout.write(
        `\nrlboard: created the first user.\n  user:     ${admin.name}\n  password: ${admin.password}\n` +
          `  (shown once; change it with: npm run users -- passwd admin --password-stdin)\n\n`,
      );
    }
    await buildIfNeeded();
    const server = await startNextServer({
      port,
      host,
      env: {
        ...healthEnv,
        ...promEnv,
        RLBOARD_COMPRESS: compress,
        ...serverEnvVars({
          dataDir,
          dumpDetails,
          runsRoots,
          follow: values.follow,
          tensorLru,
          lowMfuThreshold: mfu === undefined ? undefined : Number(mfu),
          useUtilizationOverview: values["use-utilization-overview"],
          trustProxy,
          publicUrl,
        }),
      },
    });
    const what = dumpDetails ? `run ${dumpDetails}` : `runs under ${runsRoots.join(", ")}`;
    process.stdout.write(`rlboard: serving ${what} at ${server.url} (data dir ${dataDir})\n`);
    if (promEnv.RLBOARD_PROMETHEUS_URL) {
      const n = values["prometheus-run"]?.length ?? 0;
      process.stdout.write(
        `rlboard: engine series from Prometheus at ${promEnv.RLBOARD_PROMETHEUS_URL} for runs with a selector ` +
          `(${n ? `${n} from --prometheus-run, ` : ""}others from dashboard/prometheus.json)\n`,
      );
    }
    if (publicUrl || trustProxy) {
      process.stdout.write(
        `rlboard: ${publicUrl ? `public URL ${publicUrl}` : "public URL from the proxy's X-Forwarded-Host/-Proto"}` +
          `${trustProxy ? "; trusting X-Forwarded-* from the proxy in front" : ""}\n`,
      );
    }
    if (!isLoopbackHost(host)) {
      process.stdout.write(`rlboard: listening on ${host}: reachable from other machines — put TLS in front (see README)\n`);
    }
    const shutdown = () => void server.stop().then(() => process.exit(0));
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
    server.child.on("exit", (code) => process.exit(code ?? 0));
  } catch (err) {
    if (err instanceof CliError) fail(err.message);
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("cli/serve.ts")) void main();
