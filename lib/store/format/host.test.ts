import { describe, expect, it } from "vitest";
import { parseHostText, serializeHostSamples, type HostSample } from "./host";

const sample = (ts: number, over: Partial<HostSample> = {}): HostSample => ({
  ts,
  node: "10.0.0.1",
  ncpu: 16,
  cpu: [100, 0, 50, 800, 2, 0, 1, 0],
  mem_total_kb: 131072000,
  mem_available_kb: 65536000,
  procs: [{ pid: 4321, name: "python", cpu_jiffies: 1200, rss_kb: 204800, threads: 12, voluntary_ctxt_switches: 50, nonvoluntary_ctxt_switches: 7, fds: 40, fd_limit: 1024, role: "trainer" }],
  ...over,
});

describe("host telemetry records", () => {
  it("round-trip through the JSONL codec unchanged", () => {
    const recs = [sample(1), sample(2, { exited: [{ pid: 99, name: "sglang::scheduler" }] }), sample(3, { procs: [] })];
    const text = serializeHostSamples(recs);
    expect(text.split("\n")).toHaveLength(4);
    expect(parseHostText(text)).toEqual(recs);
  });

  it.each([
    ["a torn last line (a write in progress)", (t: string) => t.slice(0, -10)],
    ["a corrupt line", (t: string) => t.replace(/^.*\n/, "{not json\n")],
    ["a line with a string ts", (t: string) => t.replace(/^\{"ts":1,/, '{"ts":"1",')],
    ["a line with procs missing", (t: string) => t.replace(/^(.*),"procs":\[[^\]]*\]/, "$1")],
    ["a proc with a negative rss", (t: string) => t.replace('"rss_kb":204800', '"rss_kb":-1')],
  ])("skip %s and keep the others", (_what, damage) => {
    const text = serializeHostSamples([sample(1), sample(2), sample(3)]);
    const damaged = damage(text);
    expect(damaged).not.toBe(text);
    expect(parseHostText(damaged)).toHaveLength(2);
  });
});
