// @vitest-environment jsdom
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, test } from "vitest";
import { RunStateCell } from "@/components/health/RunStateCell";
import { advisoryCounts, sortAdvisories } from "@/lib/health/advisory-strip";
import { firstMissing, timelineHref } from "@/components/health/use-run-status";
import { RUN_INPUT_KEYS, RUN_INPUTS, type GetRunStatusResponse } from "@/lib/contracts/health";

describe("run list state cell", () => {
  test("state badge and the worst alarm; … until judged", () => {
    const html = renderToStaticMarkup(<RunStateCell run={{ state: "crashed", alarm: { level: "critical", text: "out of memory, after the last progress" } }} />);
    expect(html).toContain('data-state="crashed"');
    expect(html).toContain("badge-crashed");
    expect(html).toContain("⚠ out of memory, after the last progress");
    expect(renderToStaticMarkup(<RunStateCell run={{ state: null, alarm: null }} />)).toContain("…");
  });
  test("the worst alarm is a badge with the count of the others (#15 defect 7)", () => {
    const html = renderToStaticMarkup(<RunStateCell run={{ state: "stalled", alarm: { level: "critical", text: "Phase 'rollout' has been open" }, alarms: 3 }} />)
    expect(html).toContain('data-level="critical"');
    expect(html).toContain("+2 more");
    expect(renderToStaticMarkup(<RunStateCell run={{ state: "running", alarm: { level: "warning", text: "x" }, alarms: 1 }} />)).not.toContain("more");
  });
});

describe("why is this empty", () => {
  const status = (missing: string[]) =>
    ({
      inputs: Object.fromEntries(RUN_INPUT_KEYS.map((k) => [k, { present: !missing.includes(k), ...RUN_INPUTS[k] }])),
    }) as unknown as GetRunStatusResponse;
  test("the first missing input the view needs, with what writes it", () => {
    expect(firstMissing(status(["dashboard", "metrics"]), ["dashboard", "metrics"])).toEqual({ key: "dashboard", text: RUN_INPUTS.dashboard.written_by });
    expect(firstMissing(status(["metrics"]), ["dashboard", "metrics"])?.key).toBe("metrics");
    expect(firstMissing(status([]), ["dashboard", "metrics"])).toBeNull();
    expect(firstMissing(undefined, ["dashboard"])).toBeNull();
  });
  test("signals link to the Compute Utilization view at their time", () => {
    expect(timelineHref("a~b", 1000.5)).toBe("/runs/a~b/timeline?v=700.5~1300.5");
  });
});

describe("advisory strip order", () => {
  test("critical, then warning, then info; the server's order within a level", () => {
    const list = [
      { level: "info" as const, message: "i" },
      { level: "warning" as const, message: "w1" },
      { level: "critical" as const, message: "c" },
      { level: "warning" as const, message: "w2" },
    ];
    expect(sortAdvisories(list).map((a) => a.message)).toEqual(["c", "w1", "w2", "i"]);
    expect(advisoryCounts(list)).toEqual({ critical: 1, warning: 2, info: 1 });
  });
});
