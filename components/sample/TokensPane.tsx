"use client";
/**
 * Tokens tab (docs/views.md 6.3): the colour-by control and legend, the windowed token
 * strip, and the metric-vs-position chart with drag-zoom. The chart's zoom is the
 * selected token range: it is kept in the URL (`range=a-b`), highlighted in the strip and
 * scrolled into view. Colour and metric changes are local (no refetch).
 */
import { useEffect, useMemo, useState } from "react";
import type { Range, Zoom } from "@/lib/charts/core/range";
import { prepareTokenChart, TOKEN_PAGE, type StatScale, type TokenModel } from "@/lib/rollout-view/tokens";
import type { TokenStat } from "@/lib/rollout-view/types";
import { CanvasChart } from "@/components/charts/CanvasChart";
import { QueryError } from "@/components/rollout/QueryError";
import { StatLegend } from "./StatLegend";
import { TokenStrip } from "./TokenStrip";

export interface TokensPaneProps {
  model: TokenModel | null;
  loading: boolean;
  error: unknown;
  colorStat: TokenStat | null;
  colorScale: StatScale | null;
  onColor: (s: TokenStat) => void;
  metric: TokenStat | null;
  onMetric: (s: TokenStat) => void;
  range: Range | null;
  onRange: (r: Range | null) => void;
  page: number;
  onPage: (p: number) => void;
}

/** Elapsed seconds while `active` (the first tokens request of a step can be slow). */
function useElapsed(active: boolean): number {
  const [since, setSince] = useState<{ t0: number; now: number } | null>(null);
  // External system: the clock. The first tick lands after a second (the text shows
  // from 2 s on); the count is cleared when the wait ends.
  useEffect(() => {
    if (!active) return;
    const t0 = Date.now();
    const id = window.setInterval(() => setSince({ t0, now: Date.now() }), 1000);
    return () => {
      window.clearInterval(id);
      setSince(null);
    };
  }, [active]);
  return active && since ? Math.round((since.now - since.t0) / 1000) : 0;
}

export function TokensPane(p: TokensPaneProps) {
  const { model } = p;
  const elapsed = useElapsed(p.loading);
  const [hoverPos, setHoverPos] = useState<number | null>(null);
  const chart = useMemo(() => (model && p.metric ? prepareTokenChart(model, p.metric) : null), [model, p.metric]);
  // The y zoom is local: switching metric keeps the x range and re-fits y.
  const [yZoom, setYZoom] = useState<{ metric: TokenStat | null; y: Range | null }>({ metric: null, y: null });
  const zoom: Zoom = { x: p.range, y: yZoom.metric === p.metric ? yZoom.y : null };

  if (!model) {
    if (p.error) return <QueryError error={p.error} what="the tokens" />;
    return (
      <p className="muted rv-note" role="status" aria-live="polite">
        loading tokens… the first open of a step detokenizes its dump and can take a while{elapsed >= 2 ? ` (${elapsed} s)` : ""}
      </p>
    );
  }

  const pages = Math.max(1, Math.ceil(model.total / TOKEN_PAGE));
  return (
    <div className="sv-tokens">
      <div className="rv-controls">
        {pages > 1 ? (
          <button type="button" className="rv-btn" disabled={p.page <= 0} onClick={() => p.onPage(p.page - 1)} aria-label="Previous token page">
            ◀
          </button>
        ) : null}
        <span data-testid="token-range">
          tokens {model.start}–{model.end} of {model.total} (prompt {model.promptLen})
        </span>
        {pages > 1 ? (
          <button type="button" className="rv-btn" disabled={p.page >= pages - 1} onClick={() => p.onPage(p.page + 1)} aria-label="Next token page">
            ▶
          </button>
        ) : null}
        <label className="muted">
          color by{" "}
          <select className="rv-input" aria-label="Color tokens by" value={p.colorStat ?? ""} onChange={(e) => p.onColor(e.target.value as TokenStat)}>
            {model.available.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        {p.colorScale ? <StatLegend scale={p.colorScale} /> : null}
        {p.loading ? <span className="muted">updating…</span> : null}
      </div>
      {p.error ? <QueryError error={p.error} what="the tokens" /> : null}

      <section className="rv-panel" aria-labelledby="sv-strip-title">
        <h2 id="sv-strip-title" className="rv-panel-title">
          Tokens — colored by {p.colorStat ?? "—"}
          {model.raw === null ? <span className="muted"> (no tokenizer: ids shown)</span> : null}
          <span className="muted sv-strip-key">
            {" "}
            · <span className="ts-prompt">prompt</span> muted · <span className="ts-masked">loss-masked</span> dimmed
            {p.range ? ` · highlighted: ${Math.ceil(p.range[0])}–${Math.floor(p.range[1])}` : ""}
          </span>
        </h2>
        <TokenStrip model={model} scale={p.colorScale} highlight={p.range} onHover={setHoverPos} />
      </section>

      <section className="rv-panel" aria-labelledby="sv-chart-title">
        <h2 id="sv-chart-title" className="rv-panel-title">
          Per-token metrics
        </h2>
        <div className="rv-controls">
          <div className="rv-chips" role="group" aria-label="Chart metric">
            {model.available.map((s) => (
              <button key={s} type="button" className="rv-btn" aria-pressed={p.metric === s} onClick={() => p.onMetric(s)}>
                {s}
              </button>
            ))}
          </div>
          <span className="muted rv-hint">drag = zoom to token range (highlights the strip) · double-click = reset</span>
        </div>
        {chart ? (
          <CanvasChart
            model={chart}
            zoom={zoom}
            onZoom={(z) => {
              setYZoom({ metric: p.metric, y: z.y });
              if (z.x !== p.range) p.onRange(z.x);
            }}
            markX={hoverPos}
            resetButton
            label={`${p.metric ?? ""} per token position`}
          />
        ) : (
          <p className="muted">No per-token statistics were dumped for this sample.</p>
        )}
      </section>
    </div>
  );
}
