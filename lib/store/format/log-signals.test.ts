import { describe, expect, it } from "vitest";
import { logSignalsFileName, parseLogSignalText, serializeLogSignalRecords, type LogSignalRecord } from "@/lib/store/format";

const rec: LogSignalRecord = {
  ts: 1_700_000_100,
  node: "node-3",
  signal: "oom",
  count: 2,
  first_ts: 1_700_000_010,
  last_ts: 1_700_000_090,
  samples: [{ file: "/logs/train.log", line: 41, text: "torch.OutOfMemoryError: CUDA out of memory." }],
};

describe("log_signals stream codec", () => {
  it("round-trips records and names the hour partition", () => {
    const text = serializeLogSignalRecords([rec, { ...rec, signal: "crash", count: 1 }]);
    expect(text.split("\n")).toHaveLength(3);
    expect(parseLogSignalText(text)).toEqual([rec, { ...rec, signal: "crash", count: 1 }]);
    expect(logSignalsFileName(1_700_000_100)).toBe("20231114_22.jsonl");
  });

  it.each([
    ["a torn last line (write in progress)", `${JSON.stringify(rec)}\n{"ts": 1, "node"`, 1],
    ["garbage between records", `${JSON.stringify(rec)}\nnot json\n${JSON.stringify(rec)}\n`, 2],
    ["a negative count", `${JSON.stringify({ ...rec, count: -1 })}\n`, 0],
    ["a missing node", `${JSON.stringify({ ...rec, node: undefined })}\n`, 0],
    ["samples that are not lines", `${JSON.stringify({ ...rec, samples: ["x"] })}\n`, 0],
    ["a non-finite ts written as a string", `${JSON.stringify({ ...rec, ts: "NaN" })}\n`, 0],
    ["an empty file", "", 0],
  ])("%s: keeps exactly the valid complete lines", (_name, text, n) => {
    expect(parseLogSignalText(text)).toHaveLength(n);
  });
});
