import { describe, expect, it } from "vitest";
import { csvField, csvText, fileStem, seriesCsv } from "@/lib/charts/core/csv";
import { chartModel } from "@/lib/charts/core/model";

describe("CSV", () => {
  it("quotes per RFC 4180 and leaves missing values empty (never 0)", () => {
    expect(csvField('say "hi", ok')).toBe('"say ""hi"", ok"');
    expect(csvField("a\nb")).toBe('"a\nb"');
    expect(csvField(null)).toBe("");
    expect(csvField(Number.NaN)).toBe("");
    expect(csvField(1e-6)).toBe("0.000001");
    expect(csvText(["a", "b"], [[1, "x,y"], [null, true]])).toBe('a,b\n1,"x,y"\n,true\n');
  });
  it("writes a chart's series in long form, gaps left out, smoothed column when on", () => {
    const m = chartModel("line", [
      { id: "a", label: "run a", color: null, x: Float64Array.from([0, 1, 2]), y: Float64Array.from([1, Number.NaN, 3]) },
      { id: "b", label: "run b", color: null, x: Float64Array.from([5]), y: Float64Array.from([7]) },
    ]);
    expect(seriesCsv(m, { xName: "step" })).toBe("series,step,value\nrun a,0,1\nrun a,2,3\nrun b,5,7\n");
    expect(seriesCsv(m, { xName: "step", smoothed: [Float64Array.from([1, Number.NaN, 2]), null] })).toBe(
      "series,step,value,smoothed\nrun a,0,1,1\nrun a,2,3,2\nrun b,5,7,\n",
    );
    expect(seriesCsv(m, { xName: "wall_time", extra: { name: "step", columns: [Float64Array.from([10, 11, 12]), null] } })).toBe(
      "series,wall_time,step,value\nrun a,0,10,1\nrun a,2,12,3\nrun b,5,,7\n",
    );
  });
  it("file stems are safe", () => {
    expect(fileStem("train/lr-pg")).toBe("train_lr-pg");
    expect(fileStem("///")).toBe("chart");
  });
});
