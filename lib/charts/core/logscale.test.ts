import { describe, expect, it } from "vitest";
import { fromLog, logColumn, logTicks, toLogModel } from "@/lib/charts/core/logscale";
import { chartModel } from "@/lib/charts/core/model";
import { formatTick } from "@/lib/charts/core/format";

describe("log scale", () => {
  it("maps values to log10 and counts the non-positive ones it hides", () => {
    const c = logColumn([100, 0, -3, 0.01, Number.NaN]);
    expect(c.y[0]).toBe(2);
    expect(c.y[3]).toBe(-2);
    expect(Number.isNaN(c.y[1]!) && Number.isNaN(c.y[2]!) && Number.isNaN(c.y[4]!)).toBe(true);
    expect(c.hidden).toBe(2); // NaN was a gap already, not hidden by the log axis
  });
  it("toLogModel recounts the points", () => {
    const m = chartModel("line", [{ id: "a", label: "a", color: null, x: Float64Array.from([0, 1, 2]), y: Float64Array.from([1, 10, 0]) }]);
    const l = toLogModel(m);
    expect(l.hidden).toBe(1);
    expect(l.model.points).toBe(2);
    expect([...l.model.series[0]!.y].slice(0, 2)).toEqual([0, 1]);
    expect(m.series[0]!.y[1]).toBe(10); // the input is not touched
  });
  it("ticks on decades over a wide range, 1-2-5 over a narrow one", () => {
    expect(logTicks([-6, 0]).map(fromLog)).toEqual([1e-6, 1e-4, 1e-2, 1]);
    expect(logTicks([-1.5, 1.2]).map(fromLog)).toEqual([0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10]);
    expect(logTicks([0, 4]).map((t) => formatTick(fromLog(t)))).toEqual(["1", "10", "100", "1000", "10000"]);
  });
  it("falls back to linear value ticks inside less than one 1-2-5 step", () => {
    const t = logTicks([Math.log10(2.1), Math.log10(4.9)]).map(fromLog);
    expect(t.length).toBeGreaterThanOrEqual(2);
    expect(t.every((v) => v >= 2.1 && v <= 4.9)).toBe(true);
  });
  it("is empty for a degenerate domain", () => {
    expect(logTicks([1, 1])).toEqual([]);
  });
});
