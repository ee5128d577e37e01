/** Is the production build older than any source file? Then e2e/bench must rebuild. */
import fs from "node:fs";
import path from "node:path";
import { APP_ROOT, distDir } from "./server-process";

const SOURCE_DIRS = ["app", "components", "lib", "public", "prisma"];
const SOURCE_FILES = ["next.config.ts", "package.json", "proxy.ts", "tsconfig.json"];

function newestMtime(p: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const ent of fs.readdirSync(p)) {
    if (ent === "node_modules" || ent.endsWith(".test.ts") || ent.endsWith(".test.tsx")) continue;
    newest = Math.max(newest, newestMtime(path.join(p, ent)));
  }
  return newest;
}

export function buildIsStale(): boolean {
  const buildId = path.join(distDir(), "BUILD_ID");
  if (!fs.existsSync(buildId)) return true;
  const built = fs.statSync(buildId).mtimeMs;
  const newest = Math.max(
    ...SOURCE_DIRS.map((d) => newestMtime(path.join(APP_ROOT, d))),
    ...SOURCE_FILES.map((f) => newestMtime(path.join(APP_ROOT, f))),
  );
  return newest > built;
}

export function removeBuild(): void {
  fs.rmSync(path.join(distDir(), "BUILD_ID"), { force: true });
}
