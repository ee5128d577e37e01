"use client";
/**
 * The sample's trace as nested spans on one time axis (docs/views.md 6 "trace"): a row per
 * span (indented by depth), `[P]` / `[D]` virtual lanes with the PD segments under each
 * generation, point events as diamonds. Hovering a bar or event shows every attr.
 */
import { useMemo, useRef, useState } from "react";
import type { GetSampleTraceResponse } from "@/lib/contracts/traces";
import { formatDuration } from "@/lib/charts/core/format";
import { niceTicks } from "@/lib/charts/core/ticks";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useElementWidth } from "@/components/charts/use-element-width";
import { KIND_COLOR, SEGMENT_SHADES } from "./colors";
import { attrLines, layoutTrace, type TraceBar, type TraceMark } from "./layout";
import "./trace.css";

const ROW_H = 20;
const LABEL_W = 250;
const TOP = 20;

function Tip({ title, lines }: { title: string; lines: [string, string][] }) {
  return (
    <div className="tr-tip">
      <b>{title}</b>
      {lines.flatMap(([k, v]) => [<span key={`k${k}`}>{k}</span>, <span key={`v${k}`}>{v}</span>])}
    </div>
  );
}

export function TraceTimeline({ trace }: { trace: GetSampleTraceResponse }) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const width = Math.max(480, useElementWidth(wrapRef, 900));
  const layout = useMemo(() => layoutTrace(trace), [trace]);
  const [tip, setTip] = useState<TooltipState | null>(null);
  const plotW = width - LABEL_W - 12;
  const X = (s: number) => LABEL_W + (s / layout.span) * plotW;
  const height = TOP + layout.rows.length * ROW_H + 6;
  const ticks = niceTicks([0, layout.span], 8);

  const barTip = (b: TraceBar, e: React.MouseEvent) => {
    const s = b.span;
    const lines: [string, string][] = [
      ["start", `+${formatDuration(b.x0)}`],
      ["duration", b.open ? "still open" : formatDuration(b.x1 - b.x0)],
      ...(s.lane ? ([["lane", `[${s.lane}]`]] as [string, string][]) : []),
      ...attrLines(s.attrs),
    ];
    setTip({ clientX: e.clientX, clientY: e.clientY, content: <Tip title={s.name} lines={lines} /> });
  };
  const markTip = (m: TraceMark, e: React.MouseEvent) => {
    setTip({ clientX: e.clientX, clientY: e.clientY, content: <Tip title={`event ${m.event.name}`} lines={[["at", `+${formatDuration(m.x)}`], ...attrLines(m.event.attrs)]} /> });
  };

  return (
    <div className="tr-wrap" ref={wrapRef} data-testid="trace-timeline">
      <svg className="tr-svg" width={width} height={height} role="img" aria-label={`Trace of sample ${trace.sample_index}: ${layout.rows.length} rows`} onMouseLeave={() => setTip(null)}>
        {ticks.map((t) => (
          <g key={t}>
            <line className="tr-grid" x1={X(t)} x2={X(t)} y1={TOP - 4} y2={height} />
            <text className="tr-muted" x={X(t)} y={12} textAnchor="middle">
              +{formatDuration(t)}
            </text>
          </g>
        ))}
        {layout.rows.map((row, i) => {
          const y = TOP + i * ROW_H;
          return (
            <g key={row.key} className="tr-row" data-lane={row.lane ?? undefined}>
              <rect className="tr-row-bg" x={0} y={y} width={width} height={ROW_H} fill="transparent" />
              <text x={6 + row.depth * 12} y={y + ROW_H / 2 + 4} className={row.lane ? "tr-lane-label" : undefined}>
                {row.label.length > 34 ? `${row.label.slice(0, 33)}…` : row.label}
              </text>
              {row.bars.map((b, j) => {
                const x0 = X(b.x0);
                const w = Math.max(1.5, X(b.x1) - x0);
                const color = row.lane && !b.back ? SEGMENT_SHADES[row.lane][j % 5]! : KIND_COLOR[b.span.kind];
                return (
                  <rect
                    key={b.span.span_id}
                    x={x0}
                    y={y + (b.back ? 3 : 5)}
                    width={w}
                    height={b.back ? ROW_H - 6 : ROW_H - 10}
                    rx={2}
                    fill={color}
                    fillOpacity={b.back ? 0.25 : b.open ? 0.5 : 0.9}
                    onMouseMove={(e) => barTip(b, e)}
                    data-span={b.span.name}
                  />
                );
              })}
              {row.marks.map((m, j) => {
                const cx = X(m.x);
                const cy = y + ROW_H / 2;
                return (
                  <path key={j} d={`M${cx} ${cy - 6} L${cx + 5} ${cy} L${cx} ${cy + 6} L${cx - 5} ${cy} Z`} fill="var(--text)" onMouseMove={(e) => markTip(m, e)} data-event={m.event.name} />
                );
              })}
            </g>
          );
        })}
      </svg>
      <ChartTooltip tip={tip} />
    </div>
  );
}
