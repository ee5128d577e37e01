"use client";
/**
 * The request-trace swimlanes of a step (docs/views.md 5.1), drawn once the traces have
 * answered. Loaded on demand by StepTraces.tsx (next/dynamic): a step without traces never
 * downloads this code.
 */
import { useMemo, useRef, useState } from "react";
import type { GetStepTracesResponse, TraceRow } from "@/lib/contracts/traces";
import { formatDuration, formatValue } from "@/lib/charts/core/format";
import { niceTicks } from "@/lib/charts/core/ticks";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useElementWidth } from "@/components/charts/use-element-width";
import { useUrlState } from "@/components/charts/use-url-state";
import { KIND_COLOR } from "@/components/sample/trace/colors";
import { parseTraceSort, sortTraceRows, TRACE_SORT_LABEL, TRACE_SORTS } from "./swimlanes";
import { MAX_ROWS, ROW_H, TOP } from "./layout";
import "@/components/sample/trace/trace.css";

const LABEL_W = 64;

function rowTip(r: TraceRow) {
  const lines: [string, string][] = [
    ["requests", formatValue(r.requests)],
    ["e2e latency", r.e2e_latency === null ? "—" : formatDuration(r.e2e_latency)],
    ["queue time", r.queue_time === null ? "—" : formatDuration(r.queue_time)],
    ["cached tokens", formatValue(r.cached_tokens)],
    ["prompt / completion", `${formatValue(r.prompt_tokens)} / ${formatValue(r.completion_tokens)}`],
    ["status", r.status ?? "—"],
    ["group", formatValue(r.group_index)],
  ];
  return (
    <div className="tr-tip">
      <b>sample {r.sample_index ?? "?"} — click to open</b>
      {lines.flatMap(([k, v]) => [<span key={`k${k}`}>{k}</span>, <span key={`v${k}`}>{v}</span>])}
    </div>
  );
}

/** Mounted with its data, so the width observer sees its element from the first effect. */
export function Swimlanes({ data, step, onOpen }: { data: GetStepTracesResponse; step: number; onOpen: (sampleIndex: number) => void }) {
  const { params, replace } = useUrlState();
  const sort = parseTraceSort(params.get("tsort"));
  const [all, setAll] = useState(false);
  const [tip, setTip] = useState<TooltipState | null>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const width = Math.max(480, useElementWidth(wrapRef, 900));
  const sorted = useMemo(() => sortTraceRows(data.rows, sort), [data, sort]);
  const { t0, t1 } = data;
  const base = t0 ?? 0;
  const span = Math.max(1e-6, (t1 ?? base) - base);
  const shown = all ? sorted : sorted.slice(0, MAX_ROWS);
  const plotW = width - LABEL_W - 10;
  const X = (t: number) => LABEL_W + ((t - base) / span) * plotW;
  const height = TOP + shown.length * ROW_H + 4;
  const ticks = niceTicks([0, span], 8);

  return (
    <section className="rv-panel" aria-labelledby="rv-traces-title" data-testid="step-traces">
      <h2 id="rv-traces-title" className="rv-panel-title">
        Request traces — every sample&apos;s SGLang calls on one time axis; click a lane for the sample
      </h2>
      <div className="tr-controls" role="group" aria-label="Sort request traces">
        <span className="muted">sort</span>
        {TRACE_SORTS.map((s) => (
          <button key={s} type="button" className="rv-btn" aria-pressed={sort === s} onClick={() => replace({ tsort: s === "start" ? null : s })}>
            {TRACE_SORT_LABEL[s]}
          </button>
        ))}
        <span className="tr-legend">
          {(["sample", "generate", "pd_prefill", "pd_decode", "reward", "tool"] as const).map((k) => (
            <span key={k}>
              <i style={{ background: KIND_COLOR[k] }} />
              {k === "pd_prefill" ? "[P] prefill" : k === "pd_decode" ? "[D] decode" : k}
            </span>
          ))}
        </span>
      </div>
      <div className="tr-wrap" ref={wrapRef}>
        <svg className="tr-svg" width={width} height={height} role="img" aria-label={`Request traces of step ${step}: ${shown.length} samples`} onMouseLeave={() => setTip(null)}>
          {ticks.map((t) => (
            <g key={t}>
              <line className="tr-grid" x1={X(base + t)} x2={X(base + t)} y1={TOP - 4} y2={height} />
              <text className="tr-muted" x={X(base + t)} y={11} textAnchor="middle">
                +{formatDuration(t)}
              </text>
            </g>
          ))}
          {shown.map((r, i) => {
            const y = TOP + i * ROW_H;
            const si = r.sample_index;
            return (
              <g
                key={`${si}-${i}`}
                className="tr-row tr-click"
                data-sample={si ?? undefined}
                onClick={() => (si !== null ? onOpen(si) : undefined)}
                onMouseMove={(e) => setTip({ clientX: e.clientX, clientY: e.clientY, content: rowTip(r) })}
              >
                <rect className="tr-row-bg" x={0} y={y} width={width} height={ROW_H} fill="transparent" />
                <text x={4} y={y + ROW_H - 3}>
                  s{si ?? "?"}
                </text>
                {r.spans.map((s, j) => {
                  const back = s.kind === "group" || s.kind === "sample";
                  const pd = s.kind === "pd_prefill" || s.kind === "pd_decode";
                  const x0 = X(s.start);
                  return (
                    <rect
                      key={j}
                      x={x0}
                      y={y + (back ? 1 : pd ? ROW_H - 5 : 3)}
                      width={Math.max(1, X(s.end) - x0)}
                      height={back ? ROW_H - 2 : pd ? 3 : ROW_H - 8}
                      fill={KIND_COLOR[s.kind]}
                      fillOpacity={back ? (s.kind === "group" ? 0.12 : 0.22) : 0.9}
                    />
                  );
                })}
              </g>
            );
          })}
        </svg>
        <ChartTooltip tip={tip} />
      </div>
      {sorted.length > shown.length ? (
        <button type="button" className="rv-btn" onClick={() => setAll(true)}>
          show all {sorted.length} samples
        </button>
      ) : null}
    </section>
  );
}
