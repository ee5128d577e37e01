import { describe, expect, it } from "vitest";
import { chartControlsPatch, parseChartControls, xColumnName } from "@/lib/charts/chart-controls";

describe("chart controls ⇄ URL", () => {
  it("parses every control and defaults the rest", () => {
    expect(parseChartControls(new URLSearchParams("sm=ema:0.8&ylog=1&xm=wall"), "xm")).toEqual({ smoothing: { kind: "ema", weight: 0.8 }, logY: true, xMode: "wall" });
    expect(parseChartControls(new URLSearchParams("x=10~40"), "xm")).toEqual({ smoothing: { kind: "none" }, logY: false, xMode: "step" });
    expect(parseChartControls(new URLSearchParams("x=time"), "x").xMode).toBe("rel");
    expect(parseChartControls(new URLSearchParams("sm=mean:25"), "x").smoothing).toEqual({ kind: "mean", window: 25 });
  });
  it("writes a patch that round-trips", () => {
    const p = chartControlsPatch({ smoothing: { kind: "ema", weight: 0.6 }, logY: true, xMode: "rel" }, "xm");
    expect(p).toEqual({ sm: "ema:0.6", ylog: "1", xm: "rel" });
    const sp = new URLSearchParams(p as Record<string, string>);
    expect(parseChartControls(sp, "xm")).toEqual({ smoothing: { kind: "ema", weight: 0.6 }, logY: true, xMode: "rel" });
    expect(chartControlsPatch({ xMode: "rel" }, "x")).toEqual({ x: "time" });
    expect(chartControlsPatch({ smoothing: { kind: "none" }, logY: false, xMode: "step" }, "x")).toEqual({ sm: null, ylog: null, x: null });
    expect(xColumnName("wall")).toBe("wall_time_unix_s");
  });
});
