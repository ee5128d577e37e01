/**
 * `npm run demo -- [--port 7788] [--host 127.0.0.1] [--data-dir ./data] [--no-live]`
 *
 * The whole product on generated data, no real run needed:
 *  1. refuse a busy port (one line, exit 1) before doing any work;
 *  2. build the app once if there is no build;
 *  3. generate the demo runs under `<data-dir>/demo-runs` when they are missing, were
 *     made by another generator version, or are older than 6 h (lib/demo/generate.ts);
 *  4. (re)set the `demo` admin with a fresh random password (lib/demo/demo-user.ts);
 *  5. serve `<data-dir>/demo-runs` in multi-run mode with --follow, and keep appending
 *     live steps to the qwen run (lib/demo/live.ts) unless --no-live;
 *  6. print the URL and the login; Ctrl-C stops the writer and the server, exit 0.
 */
import path from "node:path";
import { DEMO_RUNS, LIVE_RUN, demoRegenerateReason, generateDemoRuns } from "@/lib/demo/generate";
import { resetDemoUser } from "@/lib/demo/demo-user";
import { startDemoLiveWriter, type LiveWriterHandle } from "@/lib/demo/live";
import { openDatabase } from "@/lib/server/db";
import { CliError, fail, parseCli, resolveDataDir } from "./common";
import { buildIfNeeded, checkPortFree, serverEnvVars, startNextServer, type RunningServer } from "./server-process";

const HELP = `usage: npm run demo -- [--port 7788] [--host 127.0.0.1] [--data-dir ./data] [--no-live]
  Generates demo runs under <data-dir>/demo-runs (once), resets the 'demo' login and
  serves them; --no-live stops the qwen run from growing while you watch.`;

const say = (s: string) => process.stdout.write(`${s}\n`);

async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values } = parseCli(argv, {
    port: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    "data-dir": { type: "string" },
    "no-live": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) {
    say(HELP);
    return;
  }
  const portText = values.port ?? "7788";
  if (!/^\d+$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw new CliError(`--port must be an integer in [1, 65535], got '${portText}'`);
  }
  const port = Number(portText);
  const host = values.host;
  const dataDir = resolveDataDir(values["data-dir"]);
  const runsRoot = path.join(dataDir, "demo-runs");

  await checkPortFree(port, host);
  await buildIfNeeded();

  const nowS = Date.now() / 1000;
  const reason = demoRegenerateReason(runsRoot, nowS);
  if (reason) {
    const why = { missing: "first start", version: "generator changed", incomplete: "a run is missing", stale: "older than 6 h" }[reason];
    say(`rlboard demo: generating ${DEMO_RUNS.length} demo runs in ${runsRoot} (${why})…`);
    const t = performance.now();
    await generateDemoRuns(runsRoot, { nowS });
    say(`rlboard demo: done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }

  const db = openDatabase(dataDir);
  let login;
  try {
    login = await resetDemoUser(db);
  } finally {
    db.close();
  }

  const server: RunningServer = await startNextServer({
    port,
    host,
    env: serverEnvVars({ dataDir, runsRoots: [runsRoot], follow: true }),
  });
  let live: LiveWriterHandle | null = null;
  if (!values["no-live"]) {
    live = await startDemoLiveWriter(path.join(runsRoot, LIVE_RUN), {
      intervalS: 2,
      onError: (err) => process.stderr.write(`rlboard demo: live writer: ${err instanceof Error ? err.message : String(err)}\n`),
    });
  }

  say("");
  say(`  rlboard demo is running at ${server.url}`);
  say(`  user:     ${login.name}`);
  say(`  password: ${login.password}   (new on every start)`);
  say(`  runs:     ${DEMO_RUNS.join(", ")}${live ? ` — ${LIVE_RUN} is live` : ""}`);
  say("  Ctrl-C to stop.");
  say("");

  let stopping = false;
  const shutdown = (code: number) => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await live?.stop().catch(() => undefined);
      await server.stop();
      process.exit(code);
    })();
  };
  process.on("SIGINT", () => shutdown(0));
  process.on("SIGTERM", () => shutdown(0));
  server.child.on("exit", (code) => {
    if (stopping) return;
    process.stderr.write(`rlboard demo: the server exited (code ${code ?? "?"})\n`);
    shutdown(code ?? 1);
  });
}

main().catch((err: unknown) => {
  if (err instanceof CliError) fail(err.message);
  fail(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
