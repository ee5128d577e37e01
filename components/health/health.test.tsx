// @vitest-environment jsdom
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, test } from "vitest";
import { RunStateCell } from "@/components/health/RunStateCell";
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
