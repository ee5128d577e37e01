/**
 * Where the fixtures shipped with the repo live (`fixtures/` at the top level; see
 * fixtures/README.md for what wrote each one). Resolved from this file, not the working
 * directory, so tests pass from any cwd and on any clone.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FIXTURES_DIR = path.join(REPO_ROOT, "fixtures");
/** A run written by the real miles pipeline. */
export const MILES_DEMO_RUN = path.join(FIXTURES_DIR, "miles-demo");
/** The Python miles dashboard's answers for MILES_DEMO_RUN. */
export const MILES_DEMO_GOLDEN = path.join(FIXTURES_DIR, "miles-demo-expected", "golden.json");
/** SGLang engine / router Prometheus exposition text. */
export const SGLANG_FIXTURES = path.join(FIXTURES_DIR, "sglang");
/** Runs written by slime's own rollout path (with-pd/, no-pd/) and slime's perf values. */
export const SLIME_DEBUG_FIXTURES = path.join(FIXTURES_DIR, "slime-debug");
