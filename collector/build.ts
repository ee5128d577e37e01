/**
 * Bundle the collector daemon into one ESM file for production runs:
 *
 *   node --import tsx collector/build.ts [--if-stale] [--outfile PATH]
 *
 * Why: running the daemon under tsx costs ~30 MB of RSS (the loader and its
 * transform caches) and loading zod as ~90 separate modules costs more than
 * one pre-resolved file. `collector/launch.sh` (what `npm run collector`
 * runs) calls this with `--if-stale` and then execs plain `node` on the
 * bundle, so the daemon process never loads tsx or esbuild.
 *
 * Output: `collector/dist/collector.mjs` (gitignored) plus
 * `collector.mjs.inputs.json`, the list of files the bundle was built from.
 * The bundle is stale when it or that list is missing, or when any listed
 * input, this script, package.json, tsconfig.json or
 * node_modules/.package-lock.json (rewritten by every `npm install`) is newer
 * than the bundle. The bundle's mtime is set to the build's start time, so
 * an edit made while a build runs still triggers the next rebuild. Files are
 * written to a temporary name and renamed, so concurrent launches never run
 * a half-written bundle.
 *
 * Bundle: platform node, format esm, target node20, `@/` resolved through
 * tsconfig.json paths, Node built-ins external, all npm packages (zod) inlined.
 * No minification, so stack traces in the daemon's logs keep real names.
 *
 * zod: `import { z } from "zod"` binds zod's whole namespace object as a
 * value, which esbuild cannot tree-shake, so every locale, JSON-schema and
 * codec module is inlined (~750 kB, ~10 MB of RSS). The same namespace
 * imported as `import * as z from "zod"` and used through `z.x` property
 * reads shakes down to what the schemas use (~210 kB, ~4 MB). The
 * `zodNamespaceImport` plugin rewrites exactly that one import statement in
 * our own .ts sources while bundling (the bindings are the same object's
 * properties, so behaviour and error messages are unchanged — build.test.ts
 * checks messages through the bundle). `checkZodShaken` fails the build if
 * zod stops shaking (e.g. a new `z` used as a value), rather than silently
 * growing the daemon.
 */
import { build } from "esbuild";
import type { Plugin } from "esbuild";
import { mkdir, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
export const ENTRY = "collector/index.ts";
export const DEFAULT_OUTFILE = join(REPO_ROOT, "collector/dist/collector.mjs");
const THIS_FILE = fileURLToPath(import.meta.url);
/** Always-checked inputs besides what esbuild reports (missing ones are ignored). */
const EXTRA_INPUTS = ["package.json", "tsconfig.json", "node_modules/.package-lock.json", relative(REPO_ROOT, THIS_FILE)];

export interface BuildResult {
  outfile: string;
  /** False when `ifStale` found the bundle up to date. */
  built: boolean;
  ms: number;
}

/** zod's code in the bundle beyond this means the namespace was not tree-shaken. */
export const MAX_ZOD_BYTES = 400_000;
const ZOD_NAMED_Z = /^import \{ z \} from "zod";$/gm;

/** See the module header: `import { z } from "zod"` → `import * as z from "zod"` in our sources. */
const zodNamespaceImport: Plugin = {
  name: "zod-namespace-import",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const src = await readFile(args.path, "utf8");
      return { contents: src.replace(ZOD_NAMED_Z, 'import * as z from "zod";'), loader: "ts" };
    });
  },
};

const inputsFile = (outfile: string): string => `${outfile}.inputs.json`;

async function mtimeMs(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Why the bundle needs a rebuild, or undefined when it is up to date. */
export async function staleReason(outfile = DEFAULT_OUTFILE): Promise<string | undefined> {
  const built = await mtimeMs(outfile);
  if (built === undefined) return `${relative(REPO_ROOT, outfile)} is missing`;
  let inputs: string[];
  try {
    inputs = JSON.parse(await readFile(inputsFile(outfile), "utf8")) as string[];
    if (!Array.isArray(inputs)) throw new Error("not a list");
  } catch {
    return `${relative(REPO_ROOT, inputsFile(outfile))} is missing or unreadable`;
  }
  for (const rel of [...inputs, ...EXTRA_INPUTS]) {
    const m = await mtimeMs(resolve(REPO_ROOT, rel));
    if (m === undefined) {
      if (inputs.includes(rel)) return `${rel} is gone`;
    } else if (m > built) return `${rel} changed`;
  }
  return undefined;
}

async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

export async function buildCollector(opts: { outfile?: string; ifStale?: boolean } = {}): Promise<BuildResult> {
  const outfile = resolve(opts.outfile ?? DEFAULT_OUTFILE);
  const t0 = Date.now();
  if (opts.ifStale && (await staleReason(outfile)) === undefined) return { outfile, built: false, ms: Date.now() - t0 };
  const res = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [ENTRY],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: join(REPO_ROOT, "tsconfig.json"),
    write: false,
    metafile: true,
    legalComments: "none",
    // The lint rules are for the sources; until eslint.config.mjs ignores collector/dist/**, keep `eslint .` off the bundle.
    banner: { js: `/* eslint-disable */\n// Generated by collector/build.ts from ${ENTRY}; do not edit.` },
    logLevel: "warning",
    plugins: [zodNamespaceImport],
  });
  const out = res.outputFiles.find((f) => f.path === outfile);
  if (!out) throw new Error(`esbuild produced no ${outfile}`);
  const meta = res.metafile;
  const zodBytes = Object.entries(meta.outputs[relative(REPO_ROOT, outfile)]?.inputs ?? {})
    .filter(([path]) => path.startsWith("node_modules/zod/"))
    .reduce((n, [, v]) => n + v.bytesInOutput, 0);
  if (zodBytes > MAX_ZOD_BYTES) {
    throw new Error(`zod was not tree-shaken (${zodBytes} bytes in the bundle > ${MAX_ZOD_BYTES}); see collector/build.ts`);
  }
  const inputs = Object.keys(meta.inputs).sort();
  await mkdir(dirname(outfile), { recursive: true });
  // Inputs first, bundle last: a reader that sees the new bundle also sees its input list.
  await writeAtomic(inputsFile(outfile), JSON.stringify(inputs, null, 1) + "\n");
  const tmp = `${outfile}.${process.pid}.tmp`;
  await writeFile(tmp, out.contents);
  const start = new Date(t0);
  await utimes(tmp, start, start);
  await rename(tmp, outfile);
  return { outfile, built: true, ms: Date.now() - t0 };
}

if (process.argv[1] && resolve(process.argv[1]) === THIS_FILE) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf("--outfile");
  const outfile = i >= 0 ? argv[i + 1] : undefined;
  const ifStale = argv.includes("--if-stale");
  const quiet = argv.includes("--quiet");
  (async () => {
    const reason = ifStale ? await staleReason(outfile ? resolve(outfile) : DEFAULT_OUTFILE) : "requested";
    if (reason === undefined) return;
    const r = await buildCollector(outfile ? { outfile } : {});
    if (!quiet) process.stderr.write(`rlboard-collector: built ${relative(process.cwd(), r.outfile)} in ${r.ms} ms (${reason})\n`);
  })().catch((e: unknown) => {
    process.stderr.write(`rlboard-collector: error: cannot build the collector bundle: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
