// @vitest-environment jsdom
/* eslint-disable no-restricted-imports -- a test, not client code: the panel's fetch is answered by the real route over a real run directory */
import fs from "node:fs";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act } from "react";
import { createRoot } from "react-dom/client";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { HostPanel } from "@/components/health/HostPanel";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET } from "@/app/api/timeline/host/route";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let b: RunBuilder;
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
  server = await setupTestServer({ dumpDetails: b.runDir });
  // the browser's fetch answered by the real route handler
  vi.stubGlobal("fetch", (url: string) => callRoute(GET, url, { token: server.token }));
});
afterAll(() => {
  vi.unstubAllGlobals();
  fs.rmSync(b.runDir, { recursive: true, force: true });
});

describe("HostPanel", () => {
  test("per node: CPU, memory, the busiest process at % of a core and its fd headroom warning", async () => {
    const host = document.createElement("div");
    const root = createRoot(host);
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
    act(() => root.unmount());
  });
});
