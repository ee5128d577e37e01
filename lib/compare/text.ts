/** The compare report as plain text (`npm run compare`; docs/api.md "GET /api/compare"). */
import type { CompareReport } from "@/lib/compare/report";

export function fmtNum(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
}

export function fmtValue(v: unknown, absent = false): string {
  if (absent) return "(absent)";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => "  " + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd());
}

export function reportText(r: CompareReport, opts: { moversLimit?: number } = {}): string {
  const out: string[] = [];
  const names = r.runs.map((x, i) => `${x.id}${i === 0 ? " (baseline)" : ""}`);
  out.push(`compare ${r.runs.length} runs, baseline '${r.baseline}'`);
  out.push(...table(r.runs.map((x, i) => [`[${i}]`, x.id, x.name, x.has_args ? "args" : "no args", x.wandb_url ?? ""])));
  out.push("", `verdict: ${r.verdict.message}`);
  const counted = r.config_delta.filter((d) => !d.identity);
  out.push("", `config delta: ${counted.length} key(s) differ${r.config_delta.length > counted.length ? ` (+${r.config_delta.length - counted.length} naming the runs)` : ""}`);
  if (r.config_delta.length)
    out.push(...table([["key", ...names], ...r.config_delta.map((d) => [d.identity ? `${d.key} (run name)` : d.key, ...d.values.map((v, i) => fmtValue(v, d.absent[i]))])]));
  out.push("", "KPIs (median over steps, or peak where every median is 0; Δ and % against the baseline)");
  out.push(
    ...table([
      ["metric", "stat", ...names],
      ...r.kpis.map((k) => [
        k.label === k.key ? k.key : `${k.label} [${k.key}]`,
        k.statistic,
        ...k.values.map((v, i) => (i === 0 || k.delta[i] === null ? fmtNum(v) : `${fmtNum(v)} (${k.delta[i]! >= 0 ? "+" : ""}${fmtNum(k.delta[i])}${k.pct[i] === null ? "" : `, ${k.pct[i]! >= 0 ? "+" : ""}${k.pct[i]!.toFixed(1)}%`})`)),
      ]),
    ]),
  );
  out.push("", `availability: ${r.availability.changed.length ? `changed: ${r.availability.changed.join(", ")}` : "the same in every run"}`);
  out.push(...table([["", ...names], ...r.availability.items.map((a) => [a.label, ...a.values.map((v) => (v ? "yes" : "no"))])]));
  const limit = opts.moversLimit ?? 20;
  out.push("", `movers (shift = (median − baseline median) / baseline spread, spread = 1.4826·MAD; top ${Math.min(limit, r.movers.length)} of ${r.movers.length})`);
  out.push(...table([["metric", "shift", "spread"], ...r.movers.slice(0, limit).map((m) => [m.key, m.shift === null ? "n/a" : m.shift.toFixed(2), fmtNum(m.spread)])]));
  if (r.warnings.length) out.push("", "warnings:", ...r.warnings.map((w) => `  ${w}`));
  return out.join("\n") + "\n";
}
