import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGpuPusher } from "./gpu-push";
import type { GpuPusherHandle } from "./gpu-push";
import { startCollector } from "./server";
import type { CollectorHandle } from "./server";
import { captureLog } from "./testing/capture-log";
import { waitFor } from "./testing/child-collector";
import { writeFakeNvidiaSmi } from "./testing/fake-smi";
import { freePort } from "@/lib/testing/net";

let dir: string;
let driver: CollectorHandle | undefined;
let pusher: GpuPusherHandle | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rlb-push-"));
});
afterEach(async () => {
  await pusher?.stop();
  await driver?.stop();
  pusher = driver = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("--gpu-only --push", () => {
  it("samples this node and pushes gpu_util and gpu_processes to the driver; records survive a driver outage", async () => {
    const log = captureLog();
    const port = await freePort();
    pusher = startGpuPusher({
      pushUrl: `http://127.0.0.1:${port}/`,
      pushIntervalS: 60,
      source: "nvidia-smi",
      nvidiaSmi: writeFakeNvidiaSmi(dir),
      intervalS: 0.1,
      processIntervalS: 0.2,
      node: "10.0.0.7",
      log,
      timeoutS: 1,
    });
    await waitFor(() => pusher?.sampler.backend === "nvidia-smi", 5000, "sampler");
    await new Promise((r) => setTimeout(r, 400));
    await pusher.push(); // driver not up yet
    expect(log.messages("warn").some((w) => w.includes("/v1/gpu failed") && w.includes("kept for retry"))).toBe(true);

    const driverStart = Date.now() / 1000;
    driver = await startCollector({ runDir: join(dir, "run"), port, gpuSource: "none", flushIntervalS: 60, log: captureLog() });
    await pusher.push();
    await driver.flush();
    const dash = driver.dashDir;
    const util = readdirSync(join(dash, "gpu_util")).flatMap((f) => readFileSync(join(dash, "gpu_util", f), "utf8").trim().split("\n"));
    const ts = util.map((l) => Number(/"ts":([0-9.]+)/.exec(l)?.[1]));
    expect(Math.min(...ts)).toBeLessThan(driverStart); // sampled while the driver was down, delivered later
    expect(util.length).toBeGreaterThanOrEqual(4);
    expect(util[0]).toMatch(/^\{"ts":\d+\.\d+,"node":"10\.0\.0\.7","gpu":0,"util":\d+,"mem_mb":61234,"power_w":612\}$/);
    const procs = readdirSync(join(dash, "gpu_processes")).flatMap((f) =>
      readFileSync(join(dash, "gpu_processes", f), "utf8").trim().split("\n"),
    );
    expect(procs[0]).toMatch(/"node":"10\.0\.0\.7","gpu":0,"pid":4321,"name":"sglang::scheduler_TP0","mem_mb":40960\}$/);
    expect(pusher.dropped()).toBe(0);
  });
});

