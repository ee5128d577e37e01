import { act } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { chartModel, type ChartModel } from "@/lib/charts/core/model";
import { NO_ZOOM, type Zoom } from "@/lib/charts/core/range";
import { CanvasChart, type PointHit } from "./CanvasChart";

// jsdom lays nothing out: the chart keeps its initial 480 px width and every rect sits at
// (0, 0), so client coordinates are chart coordinates. Plot box: left 56, top 10, 410 × 186.
const PLOT = { left: 56, top: 10, width: 410, height: 186 };

const dom = domRootEachTest();
beforeEach(() => {
  HTMLElement.prototype.setPointerCapture = () => {};
  // no 2D backend in jsdom: the chart skips drawing but still stamps what it shows
  HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;
});
afterEach(() => {
  vi.useRealTimers();
});

const line = (ys: number[]): ChartModel => chartModel("line", [{ id: "k", label: "k", color: "#000", x: Float64Array.from(ys, (_, i) => i), y: Float64Array.from(ys) }], { xKind: "step" });

function render(model: ChartModel, props: { zoom?: Zoom; onZoom?: (z: Zoom) => void; onPointClick?: (h: PointHit) => void; resetButton?: boolean } = {}) {
  act(() => dom.root.render(<CanvasChart model={model} zoom={props.zoom ?? NO_ZOOM} onZoom={props.onZoom ?? (() => {})} onPointClick={props.onPointClick} resetButton={props.resetButton} label="test" />));
  return {
    chart: dom.host.querySelector<HTMLElement>('[data-testid="chart"]')!,
    plot: dom.host.querySelector<HTMLElement>('[data-testid="chart-plot"]')!,
    canvas: dom.host.querySelector("canvas")!,
  };
}

function pointer(el: Element, type: string, x: number, y: number) {
  act(() => {
    el.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: x, clientY: y, button: 0 }));
  });
}

describe("CanvasChart", () => {
  it("shows the model's domain and stamps the canvas once it painted", () => {
    const { chart, canvas } = render(line([1, 2, 3]));
    expect(chart.dataset.points).toBe("3");
    expect(chart.dataset.x0).toBe("0");
    expect(chart.dataset.x1).toBe("2");
    expect(chart.dataset.zoomed).toBe("false");
    expect(canvas.dataset.painted).toBe("data");
    expect(chart.getAttribute("aria-label")).toBe("test: 3 points, x 0 to 2");
  });

  it("says so when there is nothing to draw", () => {
    const { canvas } = render(line([]));
    expect(canvas.dataset.painted).toBe("empty");
    expect(dom.host.textContent).toContain("no data");
  });

  it("zooms x on a horizontal sweep (10 px rule) and resets on double-click", () => {
    const onZoom = vi.fn();
    const { plot } = render(line([1, 2, 3]), { onZoom });
    pointer(plot, "pointerdown", PLOT.left + 100, 100);
    pointer(plot, "pointermove", PLOT.left + 300, 104);
    expect(dom.host.querySelector(".chart-drag")).not.toBeNull();
    pointer(plot, "pointerup", PLOT.left + 300, 104);
    const z = onZoom.mock.calls[0]![0] as Zoom;
    expect(z.y).toBeNull();
    expect(z.x![0]).toBeCloseTo((100 / PLOT.width) * 2, 9);
    expect(z.x![1]).toBeCloseTo((300 / PLOT.width) * 2, 9);
    act(() => {
      plot.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    });
    expect(onZoom).toHaveBeenLastCalledWith(NO_ZOOM);
  });

  it("a scatter opens the clicked point after the double-click interval, and shows its tooltip", () => {
    vi.useFakeTimers();
    const model = chartModel("scatter", [{ id: "r", label: "r", color: null, x: Float64Array.from([0, 10]), y: Float64Array.from([0, 10]), flag: Uint8Array.from([0, 1]) }], {
      tooltip: (i) => `sample ${i}`,
    });
    const onPointClick = vi.fn();
    const { plot } = render(model, { onPointClick });
    // x domain [-0.3, 10.3] (3 % room), y [-0.8, 10.8] (8 %): point 1 sits at (454.4, 22.8)
    pointer(plot, "pointermove", 454, 23);
    expect(document.querySelector('[role="tooltip"]')?.textContent).toBe("sample 1");
    pointer(plot, "pointerdown", 454, 23);
    pointer(plot, "pointerup", 455, 24);
    expect(onPointClick).not.toHaveBeenCalled();
    act(() => {
      vi.advanceTimersByTime(300);
    });
    expect(onPointClick).toHaveBeenCalledWith({ series: 0, i: 1, x: 10 });
  });

  it("offers a reset button while zoomed when asked to", () => {
    const onZoom = vi.fn();
    render(line([1, 2, 3]), { zoom: { x: [0, 1], y: null }, onZoom, resetButton: true });
    const btn = [...dom.host.querySelectorAll("button")].find((b) => b.textContent === "reset zoom")!;
    act(() => btn.click());
    expect(onZoom).toHaveBeenCalledWith(NO_ZOOM);
  });
});

describe("CanvasChart controls (docs/charts.md §6)", () => {
  const show = (model: ChartModel, extra: Partial<Parameters<typeof CanvasChart>[0]>) => {
    act(() => dom.root.render(<CanvasChart model={model} zoom={NO_ZOOM} onZoom={() => {}} label="test" {...extra} />));
    return dom.host.querySelector<HTMLElement>('[data-testid="chart"]')!;
  };
  it("says a constant series is constant and puts its one gridline at the value, centred", () => {
    const chart = show(line([1e-6, 1e-6, 1e-6]), {});
    expect(dom.host.querySelector('[data-testid="chart-constant"]')!.textContent).toBe("constant 1e-6 over the run");
    expect(chart.dataset.constant).toBe("0.000001");
    expect(chart.dataset.yTicks).toBe("1.0e-6");
    expect(Number(chart.dataset.y0)).toBeGreaterThan(0);
    expect((Number(chart.dataset.y0) + Number(chart.dataset.y1)) / 2).toBeCloseTo(1e-6, 18);
  });
  it("draws y on a log axis with value labels and says how many values it hides", () => {
    const chart = show(line([0, 1, 10, 100, 1000]), { logY: true });
    expect(chart.dataset.yScale).toBe("log");
    expect(chart.dataset.yTicks).toBe("1|10|100|1000");
    expect(chart.dataset.points).toBe("4");
    expect(dom.host.querySelector('[data-testid="chart-log-hidden"]')!.textContent).toBe("1 value ≤ 0 hidden (log scale)");
  });
  it("a series constant only once its zeros are hidden by the log axis is not called constant", () => {
    show(line([0, 0.02, 0, 0.02, 0]), { logY: true });
    expect(dom.host.querySelector('[data-testid="chart-constant"]')).toBeNull();
    const chart = show(line([0.5, 0.5]), { logY: true });
    expect(dom.host.querySelector('[data-testid="chart-constant"]')!.textContent).toBe("constant 0.5 over the run");
    expect(chart.dataset.yTicks).toBe("0.5");
  });
  it("stamps the smoothing and the layers it painted (raw stays)", () => {
    const chart = show(line([1, 3, 2, 4]), { smoothing: { kind: "ema", weight: 0.6 } });
    expect(chart.dataset.smoothing).toBe("ema:0.6");
    expect(dom.host.querySelector("canvas")!.dataset.layers).toBe("raw,smooth");
    show(line([1, 3, 2, 4]), {});
    expect(dom.host.querySelector("canvas")!.dataset.layers).toBe("raw");
  });
  it("an offscreen (deferred) chart is a placeholder stamped deferred", () => {
    show(line([1, 2]), { deferred: true });
    expect(dom.host.querySelector("canvas")!.dataset.painted).toBe("deferred");
    expect(dom.host.querySelector('[data-testid="chart-plot"]')).toBeNull();
  });
});
