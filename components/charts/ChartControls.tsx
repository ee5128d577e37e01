"use client";

/**
 * The controls toolbar of the line-chart views (docs/charts.md §6): smoothing (off, EMA
 * with a 0–0.99 slider, running mean with a window), log-scale y and the x mode. State is
 * the URL's (lib/charts/chart-controls.ts); this component only reports changes.
 */
import { parseXMode, type ChartControls as Controls, type XMode } from "@/lib/charts/chart-controls";
import { EMA_MAX, MEAN_MAX, type Smoothing } from "@/lib/charts/core/smooth";
import "@/components/charts/chart.css";

const X_LABEL: Record<XMode, string> = { step: "step", wall: "wall time", rel: "time since run start" };

export function ChartControls(props: {
  value: Controls;
  onChange: (patch: Partial<Controls>) => void;
  /** x modes this view offers (default: all three) */
  xModes?: readonly XMode[];
  /** labels of the x modes, where a view words them differently */
  xLabels?: Partial<Record<XMode, string>>;
  /** the URL key of the x mode (option values are the URL's values: `x=time` on the overlay) */
  xKey?: "xm" | "x";
}) {
  const { value: v, onChange } = props;
  const sm = v.smoothing;
  const kind = sm.kind;
  const setKind = (k: string) => {
    const next: Smoothing = k === "ema" ? { kind: "ema", weight: 0.6 } : k === "mean" ? { kind: "mean", window: 10 } : { kind: "none" };
    onChange({ smoothing: next });
  };
  const modes = props.xModes ?? (["step", "wall", "rel"] as const);
  const urlValue = (m: XMode) => (m === "rel" && props.xKey === "x" ? "time" : m);
  return (
    <div className="chart-controls" data-testid="chart-controls">
      <label>
        smoothing
        <select className="input" aria-label="Smoothing" value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="none">off</option>
          <option value="ema">EMA</option>
          <option value="mean">running mean</option>
        </select>
      </label>
      {sm.kind === "ema" ? (
        <label>
          <input
            type="range"
            min={0}
            max={EMA_MAX}
            step={0.01}
            value={sm.weight}
            aria-label="EMA weight"
            onChange={(e) => onChange({ smoothing: { kind: "ema", weight: Number(e.target.value) } })}
          />
          <output>{sm.weight.toFixed(2)}</output>
        </label>
      ) : null}
      {sm.kind === "mean" ? (
        <label>
          window
          <input
            className="input"
            type="number"
            min={2}
            max={MEAN_MAX}
            value={sm.window}
            aria-label="Running mean window"
            style={{ width: "5em" }}
            onChange={(e) => {
              const n = Math.floor(Number(e.target.value));
              if (n >= 2 && n <= MEAN_MAX) onChange({ smoothing: { kind: "mean", window: n } });
            }}
          />
        </label>
      ) : null}
      <label>
        <input type="checkbox" checked={v.logY} aria-label="Log-scale y" onChange={(e) => onChange({ logY: e.target.checked })} /> log y
      </label>
      <label>
        x
        <select className="input" aria-label="x axis" value={urlValue(modes.includes(v.xMode) ? v.xMode : modes[0]!)} onChange={(e) => onChange({ xMode: parseXMode(e.target.value) })}>
          {modes.map((m) => (
            <option key={m} value={urlValue(m)}>
              {props.xLabels?.[m] ?? X_LABEL[m]}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
