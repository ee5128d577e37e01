/**
 * Test helper: answers of the original server for the fixture run, when the shared
 * fixtures are present (tests using it skip otherwise).
 */
// eslint-disable-next-line no-restricted-imports -- test-only helper (reads the shared fixtures); never imported by client code
import fs from "node:fs";

export const GOLDEN_PATH = "/work/shared/fixtures/miles-demo-expected/golden.json";

interface GoldenEntry {
  url: string;
  status: number;
  body: unknown;
}

let cache: GoldenEntry[] | null = null;

export function hasGolden(): boolean {
  return fs.existsSync(GOLDEN_PATH);
}

export function golden<T>(url: string): T {
  cache ??= JSON.parse(fs.readFileSync(GOLDEN_PATH, "utf8")) as GoldenEntry[];
  const e = cache.find((x) => x.url === url);
  if (!e) throw new Error(`no golden answer for ${url}`);
  return e.body as T;
}
