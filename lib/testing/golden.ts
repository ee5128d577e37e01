/**
 * Test helper: the original server's answers for the fixture run (fixtures/miles-demo-expected).
 */
import fs from "node:fs";
import { MILES_DEMO_GOLDEN } from "@/lib/testing/fixtures";

interface GoldenEntry {
  url: string;
  status: number;
  body: unknown;
}

let cache: GoldenEntry[] | null = null;

export function golden<T>(url: string): T {
  cache ??= JSON.parse(fs.readFileSync(MILES_DEMO_GOLDEN, "utf8")) as GoldenEntry[];
  const e = cache.find((x) => x.url === url);
  if (!e) throw new Error(`no golden answer for ${url}`);
  return e.body as T;
}
