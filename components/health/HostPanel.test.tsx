// @vitest-environment jsdom
import fs from "node:fs";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act } from "react";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { HostPanel, HostWindowPanel } from "@/components/health/HostPanel";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { GET } from "@/app/api/timeline/host/route";

const dom = domRootEachTest();

let b: RunBuilder;
let w: RunBuilder;
const T = 1796155200; // 2026-12-01 20:00 UTC
let server: TestServer;

beforeAll(async () => {
  b = new RunBuilder().meta({ run_name: "host-ui", start_ts: 0 });
  for (let k = 0; k < 4; k++)
    b.raw(
      "host/20261201_20.jsonl",
      JSON.stringify({
        ts: 1796155200 + 10 * k,
        node: "10.0.0.9",
        ncpu: 2,
        cpu: [1000 * k, 0, 0, 1000 * k, 0, 0, 0, 0],
        mem_total_kb: 4 * 1048576,
        mem_available_kb: 1048576,
        procs: [{ pid: 77, name: "sglang::scheduler", cpu_jiffies: 1000 * k, rss_kb: 2 * 1048576, threads: 3, voluntary_ctxt_switches: 0, nonvoluntary_ctxt_switches: 100 * k, fds: 1000, fd_limit: 1024 }],
      }) + "\n",
    );
  // the window panel's run: a registered trainer that busy-loops in the first minute and
  // fills its fd table in the second, a rollout worker that exits at T+60
  w = new RunBuilder().meta({ run_name: "host-window", start_ts: T });
  const lines: string[] = [];
  for (let k = 0; k <= 12; k++) {
    const t = T + 10 * k;
    const first = k <= 6;
    const trainerJiffies = k <= 6 ? 1000 * k : 6000 + 250 * (k - 6); // 100 % of a core, then 25 %
    const procs = [
      { pid: 10, name: "python3", role: "trainer", cpu_jiffies: trainerJiffies, rss_kb: (8 + k) * 1048576, threads: 40, voluntary_ctxt_switches: 0, nonvoluntary_ctxt_switches: 50 * k, fds: first ? 100 : 1000, fd_limit: 1024 },
      ...(k < 6 ? [{ pid: 11, name: "sglang::sched", role: "rollout", cpu_jiffies: 200 * k, rss_kb: 1048576, threads: 4, voluntary_ctxt_switches: 0, nonvoluntary_ctxt_switches: 0, fds: 10, fd_limit: null }] : []),
    ];
    lines.push(
      JSON.stringify({
        ts: t,
        node: "10.0.0.7",
        ncpu: 2,
        cpu: [1500 * k, 0, 0, 500 * k, 0, 0, 0, 0], // 75 % busy
        mem_total_kb: 64 * 1048576,
        mem_available_kb: (48 - k) * 1048576,
        procs,
        ...(k === 6 ? { exited: [{ pid: 11, name: "sglang::sched", role: "rollout" }] } : {}),
      }),
    );
  }
  w.raw("host/20261201_20.jsonl", lines.join("\n") + "\n");
  server = await setupTestServer({ dumpDetails: b.runDir });
  // the browser's fetch answered by the real route handler
  vi.stubGlobal("fetch", (url: string) => callRoute(GET, url, { token: server.token }));
});
afterAll(() => {
  vi.unstubAllGlobals();
  fs.rmSync(b.runDir, { recursive: true, force: true });
  fs.rmSync(w.runDir, { recursive: true, force: true });
});

describe("HostPanel", () => {
  test("per node: CPU, memory, the busiest process at % of a core and its fd headroom warning", async () => {
    const { host, root } = dom;
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    await act(async () => {
      root.render(
        <QueryClientProvider client={qc}>
          <HostPanel runId="" />
        </QueryClientProvider>,
      );
    });
    await vi.waitFor(() => expect(host.querySelector("[data-testid=host-panel]")).not.toBeNull());
    const text = host.textContent ?? "";
    expect(text).toContain("10.0.0.9 · 2 cores · CPU 50% · memory 75% of 4 GiB");
    expect(text).toContain("sglang::scheduler (77)");
    expect(host.querySelector("tbody tr")!.textContent).toBe("sglang::scheduler (77)100%2.0 GiB101000 / 1024");
    expect(text).toContain("1000 of 1024 file descriptors open");
  });
});

describe("HostWindowPanel (Compute Utilization)", () => {
  test("follows the window: CPU mean/peak, top processes with role, exit and the window's lowest fd headroom; a bad window shows the error", async () => {
    const s2 = await setupTestServer({ dumpDetails: w.runDir });
    vi.stubGlobal("fetch", (url: string) => callRoute(GET, url, { token: s2.token }));
    const { host, root } = dom;
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const show = (win: { t0: number; t1: number }) =>
      act(async () => {
        root.render(
          <QueryClientProvider client={qc}>
            <HostWindowPanel runId="" win={win} follow={false} />
          </QueryClientProvider>,
        );
      });
    const rows = () => [...host.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    try {
      await show({ t0: T, t1: T + 50 });
      await vi.waitFor(() => expect(host.textContent).toContain("6 samples"));
      expect(host.querySelector("[data-node] p")!.textContent).toBe("10.0.0.7 · 2 cores · CPU 75% mean, 75% peak · memory 33% of 64 GiB (6 samples)");
      expect(rows()).toEqual([
        ["python3 (10)", "trainer", "100% · 100%", "13.0 GiB", "5", "100 / 1024 (90% free)"],
        ["sglang::sched (11)", "rollout", "20% · 20%", "1.0 GiB", "0", "10 / ∞ (no limit)"],
      ]);
      expect(host.querySelector(".fired-warning")).toBeNull();

      // pan to the second minute: the rollout worker exited, the trainer slowed and its fd table is full
      await show({ t0: T + 50, t1: T + 120 });
      await vi.waitFor(() => expect(host.textContent).toContain("8 samples"));
      expect(rows()).toEqual([
        ["python3 (10)", "trainer", "36% · 100%", "20.0 GiB", "5", "1000 / 1024 (2% free)"],
        ["sglang::sched (11) · exited", "rollout", "—", "1.0 GiB", "—", "10 / ∞ (no limit)"],
      ]);
      expect(host.querySelector(".fired-warning td")!.textContent).toBe("python3 (10)");
      expect(host.textContent).toContain("at the window end: 10.0.0.7: process python3 (pid 10) has 1000 of 1024 file descriptors open (2% headroom)");

      // the widest window the timeline fetches, with fractional bounds: asked as whole
      // seconds within the API's 4 h limit (it was rounded outwards to 14401 s: a 400)
      await show({ t0: T - 14400 + 120.038, t1: T + 120.038 });
      await vi.waitFor(() => expect(host.textContent).toContain("13 samples"));
      expect(host.querySelector("[role=alert]")).toBeNull();

      // a window past the data: the run has host data, so the panel says the window is empty
      await show({ t0: T + 3600, t1: T + 3700 });
      await vi.waitFor(() => expect(host.textContent).toContain("no host samples in this window"));

      // a refresh of the same window that fails (the server went away): the last answer stays, with the error under it
      vi.stubGlobal("fetch", () => Promise.reject(new TypeError("fetch failed")));
      await act(async () => {
        await qc.refetchQueries({ queryKey: ["telemetry", ""] });
      });
      await vi.waitFor(() => expect(host.querySelector(".warn-text")?.textContent).toBe("refresh failed: fetch failed (showing the last answer)"));
      expect(host.textContent).toContain("no host samples in this window");
      vi.stubGlobal("fetch", (url: string) => callRoute(GET, url, { token: s2.token }));

      // an invalid window (t1 < t0): the API's error, as an alert in the panel
      await show({ t0: T + 100, t1: T });
      await vi.waitFor(() => expect(host.querySelector("[role=alert]")?.textContent).toBe(`host telemetry: bad window: t1=${T}.0 <= t0=${T + 100}.0`));
    } finally {
      vi.stubGlobal("fetch", (url: string) => callRoute(GET, url, { token: server.token }));
    }
  });
});
