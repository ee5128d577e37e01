/** Values cli/e2e.ts hands to the browser tests. A guard keeps tests on local data only. */
export const E2E = {
  baseURL: process.env.E2E_BASE_URL ?? "http://127.0.0.1:7799",
  user: process.env.E2E_USER ?? "e2e-admin",
  password: process.env.E2E_PASSWORD ?? "",
  token: process.env.E2E_TOKEN ?? "",
  member: process.env.E2E_MEMBER ?? "e2e-member",
  runsRoot: process.env.E2E_RUNS_ROOT ?? "",
  /** The server's data dir, for operator actions (`npm run users -- … --data-dir`). */
  dataDir: process.env.E2E_DATA_DIR ?? "",
  screenshots: process.env.E2E_SCREENSHOTS ?? "test-results/screens",
};

// cli/e2e.ts (`npm run test:e2e`) makes the runs root and the server; nothing here skips without it.
if (!E2E.runsRoot || !E2E.dataDir) throw new Error("run the browser suite with `npm run test:e2e` (it sets E2E_RUNS_ROOT and E2E_DATA_DIR)");

const host = new URL(E2E.baseURL).hostname;
if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(host)) {
  throw new Error(`e2e refuses to run against non-local ${E2E.baseURL}`);
}
