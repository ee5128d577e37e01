/**
 * The offline report as ONE self-contained HTML file (docs/export.md): the viewer
 * (lib/export/viewer/*.ts) bundled with esbuild into an inline script, the stylesheet
 * inline, the report JSON inline as a non-executed `application/json` script, and a CSP
 * that forbids every network request (`default-src 'none'`). Nothing is fetched when it
 * opens, from file:// or anywhere else.
 *
 * esbuild runs as its own binary (node_modules/esbuild/bin/esbuild, a pinned dependency),
 * so the Next server never bundles it; the viewer sources are found from the app root.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { jsonSafeStringify } from "@/lib/api/json";
import { LAZY_PARTS, type LazyPart, type PartsIndex } from "@/lib/export/parts";
import { REPORT_CSS } from "@/lib/export/styles";

export const REPORT_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

const ENTRY = path.join("lib", "export", "viewer", "main.ts");

/** The app root (the folder holding lib/export/viewer): RLBOARD_APP_ROOT, the cwd or this file's checkout. */
export function appRoot(): string {
  const starts = [process.env.RLBOARD_APP_ROOT, process.cwd()];
  try {
    starts.push(path.dirname(fileURLToPath(import.meta.url)));
  } catch {
    // bundled without a file URL (the Next server): the cwd is the app root there
  }
  for (const s of starts) {
    if (!s) continue;
    for (let d = path.resolve(/* turbopackIgnore: true */ s); ; d = path.dirname(d)) {
      if (fs.existsSync(path.join(d, ENTRY)) && fs.existsSync(path.join(d, "package.json"))) return d;
      if (path.dirname(d) === d) break;
    }
  }
  throw new Error(`cannot find ${ENTRY} (set RLBOARD_APP_ROOT to the rlboard checkout)`);
}

const g = globalThis as unknown as { __rlboardViewer?: { stamp: string; js: Promise<string> } };

function sourceStamp(root: string): string {
  const dir = path.join(root, "lib", "export", "viewer");
  return fs
    .readdirSync(dir)
    .map((f) => `${f}:${fs.statSync(path.join(dir, f)).mtimeMs}`)
    .join("|");
}

/** The viewer bundle (IIFE, minified), built once per process and rebuilt when its sources change. */
export function viewerBundle(): Promise<string> {
  const root = appRoot();
  const stamp = sourceStamp(root);
  if (g.__rlboardViewer?.stamp === stamp) return g.__rlboardViewer.js;
  const bin = path.join(root, "node_modules", "esbuild", "bin", "esbuild");
  const js = new Promise<string>((resolve, reject) => {
    execFile(
      bin,
      [ENTRY, "--bundle", "--format=iife", "--platform=browser", "--target=es2022", "--minify", "--legal-comments=none", "--log-level=error", "--tsconfig=tsconfig.json"],
      { cwd: root, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
      (err, stdout, stderr) => (err ? reject(new Error(`viewer bundle failed: ${stderr || err.message}`)) : resolve(stdout)),
    );
  });
  g.__rlboardViewer = { stamp, js };
  js.catch(() => (g.__rlboardViewer = undefined));
  return js;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** JSON that cannot end its `<script>` element early (`<` is written as \u003c). */
export function inlineJson(json: string): string {
  return json.replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}


export interface ReportJsonParts {
  /** The report without the lazy parts. */
  main: string;
  parts: Record<LazyPart, string>;
  index: PartsIndex;
}

interface IndexSource {
  utilization?: { kind: "lanes"; topology: { lanes: { node: string }[]; windows: { engines: unknown[] }[] } } | { kind: "fleet"; lanes: number } | null;
  rollout?: Record<string, unknown>;
  samples?: Record<string, unknown[]>;
}

function partsIndex(r: IndexSource): PartsIndex {
  const u = r.utilization ?? null;
  return {
    utilization: !u
      ? null
      : u.kind === "fleet"
        ? { kind: "fleet", lanes: u.lanes, nodes: null, engines: null }
        : { kind: "lanes", lanes: u.topology.lanes.length, nodes: new Set(u.topology.lanes.map((l) => l.node)).size, engines: u.topology.windows.at(-1)?.engines.length ?? 0 },
    rollout_steps: Object.keys(r.rollout ?? {}),
    sample_steps: Object.entries(r.samples ?? {}).filter(([, l]) => l.length > 0).map(([s]) => s),
  };
}

/** The report's JSON text once (NaN → null, jsonSafeStringify), split into the main object and the lazy parts. */
export function reportJsonParts(report: Record<string, unknown>): ReportJsonParts {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(report)) if (!(LAZY_PARTS as readonly string[]).includes(k)) rest[k] = v;
  const parts = Object.fromEntries(LAZY_PARTS.map((k) => [k, jsonSafeStringify(report[k] ?? null)])) as Record<LazyPart, string>;
  return { main: jsonSafeStringify(rest), parts, index: partsIndex(report) };
}

/** The whole report's JSON text from its parts (report.json; key order: main keys, then the parts). */
export function joinReportJson({ main, parts }: ReportJsonParts): string {
  const tail = LAZY_PARTS.map((k) => `${JSON.stringify(k)}:${parts[k]}`).join(",");
  return main === "{}" ? `{${tail}}` : `${main.slice(0, -1)},${tail}}`;
}

/** The report object inlined in a page written by `renderReportHtml` (tests, and anyone scraping a report). */
export function readInlineReport(html: string): Record<string, unknown> {
  const block = (attr: string) => {
    const m = new RegExp(`<script type="application/json" ${attr}>([\\s\\S]*?)</script>`).exec(html);
    if (!m) throw new Error(`no ${attr} block`);
    return JSON.parse(m[1]!) as unknown;
  };
  const out = block('id="report-data"') as Record<string, unknown>;
  for (const k of LAZY_PARTS) out[k] = block(`data-part="${k}"`);
  return out;
}

/** The report page from the report's JSON parts. */
export async function renderReportHtml(json: ReportJsonParts, title: string): Promise<string> {
  const js = (await viewerBundle()).replace(/<\/(script)/gi, "<\\/$1");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(title)} — rlboard offline report</title>`,
    `<style>${REPORT_CSS}</style>`,
    "</head>",
    "<body>",
    '<div id="app"><noscript>This report draws its charts with JavaScript; the data is also in the report JSON.</noscript></div>',
    `<script type="application/json" id="report-index">${inlineJson(JSON.stringify(json.index))}</script>`,
    `<script type="application/json" id="report-data">${inlineJson(json.main)}</script>`,
    ...LAZY_PARTS.map((k) => `<script type="application/json" data-part="${k}">${inlineJson(json.parts[k])}</script>`),
    `<script>${js}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
