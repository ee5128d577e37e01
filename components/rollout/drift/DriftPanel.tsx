"use client";
/**
 * Rollouts step page → "Drift" tab (docs/views.md 4.6): the distribution of per-token
 * lp_diff (log-count histogram), |lp_diff| and the importance ratio per bin (response
 * position, segment, engine or weight version), tokens outside the ratio clip, and per
 * bin the samples with the most |lp_diff| mass, each linking to its Tokens tab scrolled
 * to the worst token (`tab=tokens&page=…&range=t-t+1`). Below it, the step's staleness.
 * State in the URL: dby, dbins, dlo, dhi (clip), dbin (the open bin).
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "@/components/shell/Link";
import { useUrlState } from "@/components/charts/use-url-state";
import { apiJson } from "@/lib/client/fetcher";
import { formatValue } from "@/lib/charts/core/format";
import type { RolloutDriftResponse } from "@/lib/contracts/drift";
import { sampleHref } from "@/lib/rollout-view/nav";
import { TOKEN_PAGE } from "@/lib/rollout-view/tokens";
import { QueryError } from "../QueryError";
import { Bars } from "./Bars";
import { StalenessPanel } from "./StalenessPanel";
import "./drift.css";

const BY = ["position", "segment", "engine", "version"] as const;
type By = (typeof BY)[number];

export interface DriftPanelProps {
  runId: string;
  step: number;
  evaluation: boolean;
}

export function driftUrl(runId: string, step: number, q: { by: By; bins: number; lo: number; hi: number; evaluation: boolean }): string {
  const p = new URLSearchParams({ run: runId, by: q.by, bins: String(q.bins), clip_lo: String(q.lo), clip_hi: String(q.hi) });
  if (q.evaluation) p.set("eval", "1");
  return `/api/rollout/${step}/drift?${p.toString()}`;
}

/** Link to a sample's Tokens tab with token `t` (absolute position) highlighted and in view. */
export function tokenHref(runId: string, step: number, sampleIndex: number, evaluation: boolean, t: number): string {
  const q = new URLSearchParams({ tab: "tokens", range: `${t}-${t + 1}` });
  const page = Math.floor(t / TOKEN_PAGE);
  if (page > 0) q.set("page", String(page));
  return sampleHref(runId, step, sampleIndex, evaluation, q);
}

const num = (raw: string | null, dflt: number) => {
  const v = raw === null ? NaN : Number(raw);
  return Number.isFinite(v) ? v : dflt;
};
const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "—" : formatValue(v));

export function DriftPanel({ runId, step, evaluation }: DriftPanelProps) {
  const { params, replace } = useUrlState();
  const byRaw = params.get("dby");
  const by: By = (BY as readonly string[]).includes(byRaw ?? "") ? (byRaw as By) : "position";
  const bins = Math.min(200, Math.max(1, Math.round(num(params.get("dbins"), 16))));
  const lo = num(params.get("dlo"), 0.8);
  const hi = num(params.get("dhi"), 1.25);
  const sel = params.get("dbin");
  const url = driftUrl(runId, step, { by, bins, lo, hi, evaluation });
  const q = useQuery({
    queryKey: ["rollout", runId, step, evaluation, "drift", by, bins, lo, hi],
    queryFn: () => apiJson<RolloutDriftResponse>(url),
    staleTime: 5 * 60_000,
  });
  const d = q.data;
  const open = d?.bins.find((b) => b.key === sel) ?? null;
  return (
    <div role="tabpanel" aria-label="Drift" data-state={q.isSuccess ? "ready" : "loading"}>
      <section className="rv-panel" aria-labelledby="dr-title">
        <div className="rv-panel-head">
          <h2 id="dr-title" className="rv-panel-title">
            Train–inference drift: lp_diff = log_probs − rollout_log_probs (loss-masked tokens)
          </h2>
        </div>
        <div className="dr-controls">
          <label>
            by{" "}
            <select aria-label="Drift breakdown" value={by} onChange={(e) => replace({ dby: e.target.value === "position" ? null : e.target.value, dbin: null })}>
              {BY.map((b) => (
                <option key={b} value={b}>
                  {b === "version" ? "weight version" : b === "position" ? "response position" : b}
                </option>
              ))}
            </select>
          </label>
          {by === "position" ? (
            <label>
              bins{" "}
              <input type="number" aria-label="Position bins" min={1} max={200} value={bins} onChange={(e) => replace({ dbins: e.target.value || null, dbin: null })} />
            </label>
          ) : null}
          <label>
            ratio clip [
            <input type="number" aria-label="Clip low" step={0.05} value={lo} onChange={(e) => replace({ dlo: e.target.value || null })} />,{" "}
            <input type="number" aria-label="Clip high" step={0.05} value={hi} onChange={(e) => replace({ dhi: e.target.value || null })} />]
          </label>
          {q.isFetching ? <span className="muted rv-hint">computing…</span> : null}
        </div>
        {q.isError ? <QueryError error={q.error} what={`the drift of step ${step}`} /> : null}
        {d ? (
          <>
            {d.note ? <p className="dr-note">{d.note}</p> : null}
            {d.available ? (
              <>
                <div className="dr-kv" aria-label="Drift summary">
                  <span>
                    tokens <b>{formatValue(d.tokens)}</b>
                  </span>
                  <span>
                    samples <b>{d.samples}</b>
                  </span>
                  <span>
                    mean |lp_diff| <b>{fmt(d.overall.mean)}</b>
                  </span>
                  <span>
                    p50 <b>{fmt(d.overall.p50)}</b>
                  </span>
                  <span>
                    p90 <b>{fmt(d.overall.p90)}</b>
                  </span>
                  <span>
                    p99 <b>{fmt(d.overall.p99)}</b>
                  </span>
                  <span>
                    max <b>{fmt(d.overall.max)}</b>
                  </span>
                  <span>
                    mean ratio <b>{fmt(d.overall.mean_ratio)}</b>
                  </span>
                  <span data-testid="clip-count">
                    outside [{lo}, {hi}]: <b>{d.overall.clip_low + d.overall.clip_high}</b> ({fmt(d.overall.clip_frac)}; {d.overall.clip_low} low, {d.overall.clip_high} high)
                  </span>
                </div>
                <div className="dr-row">
                  <div>
                    <div className="muted rv-hint">lp_diff histogram (log count)</div>
                    <Bars
                      title="lp_diff histogram"
                      values={d.histogram.counts}
                      log
                      label={(i) => {
                        const w = ((d.histogram.hi ?? 0) - (d.histogram.lo ?? 0)) / d.histogram.counts.length;
                        const a = (d.histogram.lo ?? 0) + i * w;
                        return `[${formatValue(a)}, ${formatValue(a + w)})`;
                      }}
                      axis={[fmt(d.histogram.lo), fmt(d.histogram.hi)]}
                    />
                  </div>
                  <div>
                    <div className="muted rv-hint">p99 |lp_diff| per bin (mean in front) — click a bar for its samples</div>
                    <Bars
                      title="p99 |lp_diff| per bin"
                      values={d.bins.map((b) => b.p99_abs ?? 0)}
                      overlay={d.bins.map((b) => b.mean_abs ?? 0)}
                      label={(i) => d.bins[i]?.label ?? ""}
                      selected={open ? d.bins.indexOf(open) : null}
                      onSelect={(i) => replace({ dbin: d.bins[i]?.key ?? null })}
                      axis={d.bins.length ? [d.bins[0]!.label, d.bins[d.bins.length - 1]!.label] : undefined}
                    />
                  </div>
                </div>
                <table className="dr-table" aria-label="Drift bins">
                  <thead>
                    <tr>
                      <th>{by === "position" ? "response position" : by === "version" ? "weight version" : by}</th>
                      <th>tokens</th>
                      <th>mean |Δ|</th>
                      <th>p99 |Δ|</th>
                      <th>max |Δ|</th>
                      <th>mean ratio</th>
                      <th>p99 ratio</th>
                      <th>outside clip</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.bins.map((b) => (
                      <tr key={b.key} aria-selected={open?.key === b.key} onClick={() => replace({ dbin: open?.key === b.key ? null : b.key })}>
                        <td>{b.label}</td>
                        <td>{formatValue(b.tokens)}</td>
                        <td>{fmt(b.mean_abs)}</td>
                        <td>{fmt(b.p99_abs)}</td>
                        <td>{fmt(b.max_abs)}</td>
                        <td>{fmt(b.mean_ratio)}</td>
                        <td>{fmt(b.p99_ratio)}</td>
                        <td>{b.clip_out}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {open ? (
                  <div aria-label="Top samples of the bin">
                    <h3 className="rv-panel-title">
                      {open.label}: top {open.top.length} samples by |lp_diff| mass
                    </h3>
                    <ol className="dr-top">
                      {open.top.map((t) => (
                        <li key={t.sample_index}>
                          <Link href={tokenHref(runId, step, t.sample_index, evaluation, t.worst_token)}>sample {t.sample_index}</Link> — mass {fmt(t.mass)} over {t.tokens} tok, worst |Δ| {fmt(t.worst_abs)} at token {t.worst_token}
                        </li>
                      ))}
                    </ol>
                  </div>
                ) : null}
              </>
            ) : null}
          </>
        ) : null}
      </section>
      {d ? <StalenessPanel runId={runId} step={step} evaluation={evaluation} s={d.staleness} /> : null}
    </div>
  );
}
