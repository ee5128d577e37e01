"use client";

/**
 * Small panels of the Compute Utilization view: the MFU tile (with a trend line and a
 * link to its chart), the run advisory (severity, alarms before hints) and the legend.
 */
import { Link } from "@/components/shell/Link";
import type { Advisory, Mfu, MetricPoints } from "@/lib/charts/api-shapes";
import { formatPercent } from "@/lib/charts/core/format";
import { isHatchedPhase, isKnownPhase, laneColors, phaseColor, type ThemeName } from "@/lib/charts/palette";

function Sparkline({ points }: { points: MetricPoints | undefined }) {
  const xs: number[] = [];
  const ys: number[] = [];
  points?.x.forEach((x, i) => {
    const y = points.y[i];
    if (typeof x === "number" && typeof y === "number" && Number.isFinite(y)) {
      xs.push(x);
      ys.push(y);
    }
  });
  const W = 160;
  const H = 36;
  // an empty box of the same size until the trend is here (its tile keeps its height)
  if (xs.length < 2) return <svg className="sparkline" width={W} height={H} aria-hidden="true" />;
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y0 = Math.min(...ys);
  const y1 = Math.max(...ys);
  const px = (x: number) => ((x - x0) / (x1 - x0 || 1)) * (W - 4) + 2;
  const py = (y: number) => H - 2 - ((y - y0) / (y1 - y0 || 1)) * (H - 4);
  return (
    <svg className="sparkline" width={W} height={H} role="img" aria-label={`MFU trend over ${xs.length} steps`}>
      <polyline points={xs.map((x, i) => `${px(x)},${py(ys[i]!)}`).join(" ")} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

/** `mfu` null: its answer is on the way (the run logs MFU) — the tile keeps its place meanwhile. */
export function MfuTile({ mfu: given, trend, metricsHref }: { mfu: Mfu | null; trend: MetricPoints | undefined; metricsHref: string }) {
  const loading = given === null;
  const mfu: Mfu = given ?? { latest: null, mean: null, steps: 0, peak: null };
  const peak = mfu.peak;
  return (
    <section className="panel tl-panel" aria-label="Model FLOPs utilization" data-testid="mfu" aria-busy={loading} data-state={loading ? "loading" : "ready"}>
      <h2 className="panel-title">
        Model FLOPs utilization <Link href={metricsHref} className="small">chart →</Link>
      </h2>
      <div className="stat-grid">
        <div className="stat">
          <div className="stat-v">{formatPercent(mfu.latest)}</div>
          <div className="stat-k">latest{peak !== null && mfu.latest !== null ? ` · ${Math.round(mfu.latest * peak)} of ${peak} TFLOP/s` : ""}</div>
        </div>
        <div className="stat">
          <div className="stat-v">{formatPercent(mfu.mean)}</div>
          <div className="stat-k">
            {loading ? "mean over the steps" : `mean over ${mfu.steps} step${mfu.steps === 1 ? "" : "s"}`}
          </div>
        </div>
        <div className="stat">
          <div className="stat-v">{peak === null ? "—" : `${peak} TFLOP/s`}</div>
          <div className="stat-k">device peak (dense bf16)</div>
        </div>
        <div className="stat stat-spark">
          <Sparkline points={trend} />
          <div className="stat-k">perf/actor_train_mfu per step</div>
        </div>
      </div>
      <p className="muted small">
        3× forward FLOPs of the model per GPU over the whole actor-train step; the first step is left out as warm-up. Activation recompute, optimizer work and CPU offload add
        time without model FLOPs, so they lower it legitimately; heads outside the FLOPs model (e.g. MTP) make it an understatement.
      </p>
    </section>
  );
}

// Drawn with CSS (a filled disc with one character) so no emoji font is needed.
const ICON: Record<string, string> = { critical: "!", warning: "!", info: "i" };

export function AdvisoryPanel({ items, stale }: { items: readonly Advisory[]; stale: string | null }) {
  if (items.length === 0) return null;
  const order = { critical: 0, warning: 1, info: 2 } as Record<string, number>;
  const sorted = [...items].sort((a, b) => (order[a.level] ?? 3) - (order[b.level] ?? 3));
  return (
    <section className="panel tl-panel" aria-label="Run advisory" data-testid="advisory">
      <h2 className="panel-title">Run advisory</h2>
      <ul className="advisories">
        {sorted.map((a, i) => (
          <li key={i} className={`adv adv-${a.level}`}>
            <span className={`adv-icon adv-icon-${a.level}`} aria-hidden="true">
              {ICON[a.level] ?? "•"}
            </span>
            <span className="adv-level">{a.level}</span>
            <span>{a.message}</span>
          </li>
        ))}
      </ul>
      {stale ? <p className="warn-text small">refresh failed: {stale} (showing the last list)</p> : null}
    </section>
  );
}

export function Legend(props: { phases: readonly string[]; theme: ThemeName; overlayLabel: string | null; mem: boolean; memMaxGb: number; overlayMax: number | null }) {
  const c = laneColors(props.theme);
  return (
    <section className="panel tl-panel" aria-label="Legend" data-testid="legend">
      <h2 className="panel-title">Legend</h2>
      <div className="legend-flow">
        {props.phases.map((p) => (
          <span key={p} className="legend-item">
            <span
              className={`swatch-box${isHatchedPhase(p) ? " hatched" : ""}`}
              style={{ background: phaseColor(p, props.theme) }}
              title={isKnownPhase(p) ? p : `${p} (unknown phase: neutral colour)`}
            />
            {p}
          </span>
        ))}
        <span className="legend-item">
          <span className="swatch-line" style={{ background: c.utilStroke }} /> gpu util (0–100%)
        </span>
        {props.mem ? (
          <span className="legend-item">
            <span className="swatch-line" style={{ background: c.mem }} /> memory (0–{props.memMaxGb.toFixed(1)} GB)
          </span>
        ) : null}
        {props.overlayLabel ? (
          <span className="legend-item">
            <span className="swatch-line" style={{ background: c.overlay }} /> {props.overlayLabel}
            {props.overlayMax !== null ? ` (0–${props.overlayMax >= 10 ? Math.round(props.overlayMax) : props.overlayMax.toFixed(2)})` : ""}
          </span>
        ) : null}
      </div>
    </section>
  );
}
