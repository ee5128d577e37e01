"use client";
/**
 * Reward-vs-length scatter (red = truncated) with selectable axes. Click a point to open
 * the sample; drag to zoom; "filter table to box" turns the zoom box into table filters.
 */
import { useMemo, useState } from "react";
import { NO_ZOOM, type Zoom } from "@/lib/charts/core/range";
import { numericColumns, prepareScatter } from "@/lib/rollout-view/scatter";
import type { SummaryRow } from "@/lib/rollout-view/types";
import { CanvasChart } from "@/components/charts/CanvasChart";

export interface RewardScatterProps {
  rows: SummaryRow[];
  columns: string[];
  defaultY: string;
  x: string | null;
  y: string | null;
  onAxes: (x: string, y: string) => void;
  onOpen: (sampleIndex: number) => void;
  onFilterBox: (filters: { id: string; value: string }[]) => void;
  /** How many rows the table filters removed (the scatter shows the same rows). */
  hiddenByFilters: number;
}

const round = (v: number) => Number(v.toPrecision(4));

export function RewardScatter({ rows, columns, defaultY, x, y, onAxes, onOpen, onFilterBox, hiddenByFilters }: RewardScatterProps) {
  const numeric = useMemo(() => numericColumns(columns, rows), [columns, rows]);
  const xCol = x && numeric.includes(x) ? x : numeric.includes("response_length") ? "response_length" : (numeric[0] ?? "response_length");
  const yCol = y && numeric.includes(y) ? y : numeric.includes(defaultY) ? defaultY : "reward";
  const sc = useMemo(() => prepareScatter(rows, { x: xCol, y: yCol }), [rows, xCol, yCol]);
  const [zoomState, setZoom] = useState<{ key: string; zoom: Zoom }>({ key: "", zoom: NO_ZOOM });
  const key = `${xCol}|${yCol}|${rows.length}`;
  const zoom = zoomState.key === key ? zoomState.zoom : NO_ZOOM;

  const select = (axis: "x" | "y", value: string, current: string) => (
    <select className="rv-input" aria-label={`Scatter ${axis} axis`} value={current} onChange={(e) => (axis === "x" ? onAxes(e.target.value, yCol) : onAxes(xCol, e.target.value))}>
      {numeric.map((c) => (
        <option key={c} value={c}>
          {c}
        </option>
      ))}
    </select>
  );

  return (
    <section className="rv-panel" aria-labelledby="rv-scatter-title">
      <h2 id="rv-scatter-title" className="rv-panel-title">
        {yCol} vs {xCol} <span className="rv-bad-text">(red = truncated)</span>
      </h2>
      <div className="rv-controls">
        <label className="muted">y {select("y", yCol, yCol)}</label>
        <label className="muted">x {select("x", xCol, xCol)}</label>
        <span className="muted rv-hint">
          {sc.ids.length} points{sc.skipped ? ` (${sc.skipped} without a value)` : ""}
          {hiddenByFilters ? ` · ${hiddenByFilters} hidden by table filters` : ""}
          {sc.jittered ? " · few distinct y values: jittered ±3.5% for visibility" : ""} · click = open · drag = zoom · double-click = reset
        </span>
        {zoom.x || zoom.y ? (
          <button
            type="button"
            className="rv-btn"
            onClick={() => {
              const f: { id: string; value: string }[] = [];
              if (zoom.x) f.push({ id: xCol, value: `${round(zoom.x[0])}..${round(zoom.x[1])}` });
              if (zoom.y) f.push({ id: yCol, value: `${round(zoom.y[0])}..${round(zoom.y[1])}` });
              onFilterBox(f);
            }}
          >
            filter table to box
          </button>
        ) : null}
      </div>
      <CanvasChart
        model={sc.model}
        zoom={zoom}
        onZoom={(z) => setZoom({ key, zoom: z })}
        height={260}
        onPointClick={(hit) => onOpen(sc.ids[hit.i]!)}
        resetButton
        label={`Scatter of ${yCol} against ${xCol}, ${sc.ids.length} samples`}
      />
    </section>
  );
}
