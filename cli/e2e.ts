/**
 * `npm run test:e2e`: the browser suite against a real production server.
 * 1. Chromium present (installed from Debian when possible);
 * 2. a fresh build when sources are newer than the last one;
 * 3. a temp data dir with the generated demo runs and a copy of the real miles fixture run
 *    (fixtures/miles-demo, shipped in the repo), a user and an API token;
 * 4. `playwright test`, then the server is stopped whatever happened.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase } from "@/lib/server/db";
import { addUser, createToken, randomPasswordForTests } from "@/lib/testing/users";
import { generateDemoRuns } from "@/lib/demo/generate";
import { MILES_DEMO_RUN, SLIME_DEBUG_FIXTURES } from "@/lib/testing/fixtures";
import { ensureChromium } from "./debian-tools";
import { buildIsStale, removeBuild } from "./build-freshness";
import { CliError, fail } from "./common";
import { APP_ROOT, buildIfNeeded, checkPortFree, serverEnvVars, startNextServer } from "./server-process";

async function main(): Promise<void> {
  const chromium = ensureChromium();
  if (buildIsStale()) removeBuild();
  await buildIfNeeded();

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-e2e-"));
  const dataDir = path.join(work, "data");
  const runsRoot = path.join(work, "runs");
  fs.mkdirSync(runsRoot, { recursive: true });
  await generateDemoRuns(runsRoot, { nowS: Date.now() / 1000 });
  const dest = path.join(runsRoot, "miles-demo");
  fs.cpSync(MILES_DEMO_RUN, dest, { recursive: true });
  ageTree(dest, new Date("2026-01-01T00:00:00Z"));
  // A run written by slime's own rollout path (traces, PD breakdown; e2e/slime.spec.ts).
  const slime = path.join(runsRoot, "slime-pd");
  fs.cpSync(path.join(SLIME_DEBUG_FIXTURES, "with-pd"), slime, { recursive: true });
  ageTree(slime, new Date("2026-01-01T00:00:00Z"));

  const db = openDatabase(dataDir);
  const password = randomPasswordForTests();
  await addUser(db, "e2e-admin", password, "admin");
  await addUser(db, "e2e-member", password, "member");
  const token = createToken(db, "e2e-admin");
  db.close();

  const port = Number(process.env.E2E_PORT ?? 7799);
  await checkPortFree(port, "127.0.0.1");
  const server = await startNextServer({
    port,
    host: "127.0.0.1",
    quiet: true,
    env: serverEnvVars({ dataDir, runsRoots: [runsRoot], follow: true }),
  });
  let status = 1;
  try {
    const screens = path.join(APP_ROOT, "test-results", "screens");
    fs.mkdirSync(screens, { recursive: true });
    const res = spawnSync(process.execPath, [path.join(APP_ROOT, "node_modules", "@playwright", "test", "cli.js"), "test", ...process.argv.slice(2)], {
      cwd: APP_ROOT,
      stdio: "inherit",
      env: {
        ...process.env,
        CHROMIUM_PATH: chromium,
        E2E_BASE_URL: server.url,
        E2E_USER: "e2e-admin",
        E2E_MEMBER: "e2e-member",
        E2E_PASSWORD: password,
        E2E_TOKEN: token,
        E2E_RUNS_ROOT: runsRoot,
        E2E_DATA_DIR: dataDir,
        E2E_SCREENSHOTS: screens,
      },
    });
    status = res.status ?? 1;
  } finally {
    await server.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  process.exit(status);
}

function ageTree(dir: string, when: Date): void {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) ageTree(p, when);
    fs.utimesSync(p, when, when);
  }
  fs.utimesSync(dir, when, when);
}

main().catch((err: unknown) => {
  if (err instanceof CliError) fail(err.message);
  fail(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
