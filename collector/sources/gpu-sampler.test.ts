import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GpuProcessSample, GpuSample } from "@/lib/store/format";
import { captureLog } from "../testing/capture-log";
import { FAKE_UUIDS, writeFakeAmdSmi, writeFakeNvidiaSmi } from "../testing/fake-smi";
import { GpuSampler } from "./gpu-sampler";
import type { GpuSamplerOptions } from "./gpu-sampler";
import { parseNvidiaGpuLine, parseNvidiaProcessLine } from "./gpu-smi";

let dir: string;
let sampler: GpuSampler | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rlb-smi-"));
});
afterEach(async () => {
  await sampler?.stop();
  sampler = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const until = async (cond: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

function startSampler(over: Partial<GpuSamplerOptions>) {
  const gpu: GpuSample[] = [];
  const procs: GpuProcessSample[] = [];
  const log = captureLog();
  sampler = new GpuSampler({
    source: "nvidia-smi",
    intervalS: 0.1,
    processIntervalS: 0.2,
    node: "10.0.0.1",
    sink: { gpu: (r) => gpu.push(...r), processes: (r) => procs.push(...r) },
    log,
    restartBaseMs: 50,
    ...over,
  });
  sampler.start();
  return { gpu, procs, log };
}

describe("nvidia-smi parsing", () => {
  it("floors MiB and W, skips devices with unavailable util/memory, treats missing power as 0", () => {
    expect(parseNvidiaGpuLine("3, GPU-x, 87, 61234, 612.99")).toEqual({ gpu: 3, uuid: "GPU-x", util: 87, memMb: 61234, powerW: 612 });
    expect(parseNvidiaGpuLine("0, GPU-x, 87, 100, [N/A]")).toMatchObject({ powerW: 0 });
    expect(parseNvidiaGpuLine("0, GPU-x, [N/A], 100, 1")).toMatchObject({ gpu: 0, uuid: "GPU-x" });
    expect(parseNvidiaGpuLine("0, GPU-x, [N/A], 100, 1")).toHaveProperty("error");
    expect(parseNvidiaGpuLine("garbage")).toHaveProperty("error");
    expect(parseNvidiaProcessLine("GPU-x, 12, a, b, [N/A]")).toEqual({ uuid: "GPU-x", gpu: undefined, pid: 12, name: "a, b", memMb: 0 });
    expect(parseNvidiaProcessLine("GPU-x, 12, [N/A], 5")).toMatchObject({ name: "pid 12", memMb: 5 });
  });
});

describe("GpuSampler (nvidia-smi)", () => {
  it("streams one long-lived child and stamps each tick's GPUs with one ts", async () => {
    const calls = join(dir, "calls");
    process.env.FAKE_SMI_CALLS = calls;
    try {
      const { gpu, procs, log } = startSampler({ nvidiaSmi: writeFakeNvidiaSmi(dir) });
      await until(() => gpu.length >= 6 && procs.length >= 2);
      expect(sampler?.backend).toBe("nvidia-smi");
      expect(new Set(gpu.map((g) => g.gpu))).toEqual(new Set([0, 2])); // GPU 1 reads [N/A]
      const first = gpu.filter((g) => g.ts === gpu[0]?.ts);
      expect(first.map((g) => g.gpu)).toEqual([0, 2]);
      expect(gpu[0]).toMatchObject({ node: "10.0.0.1", mem_mb: 61234, power_w: 612 });
      expect(gpu.find((g) => g.gpu === 2)?.power_w).toBe(0);
      expect(procs[0]).toMatchObject({ gpu: 0, pid: 4321, name: "sglang::scheduler_TP0", mem_mb: 40960 });
      expect(procs[1]).toMatchObject({ gpu: 1, pid: 4400, mem_mb: 0 });
      expect(procs.some((p) => p.name === "ghost")).toBe(false);
      expect(log.messages("warn").some((w) => w.includes("GPU-unknown"))).toBe(true);
      const lines = readFileSync(calls, "utf8").trim().split("\n");
      expect(lines.filter((l) => l.includes("-lms"))).toEqual([
        `--query-gpu=index,uuid,utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits -lms 100`,
      ]);
      expect(FAKE_UUIDS).toHaveLength(2);
    } finally {
      delete process.env.FAKE_SMI_CALLS;
    }
  });

  it("restarts a dying child with backoff and keeps sampling", async () => {
    process.env.FAKE_SMI_TICKS = "1";
    try {
      const { gpu, log } = startSampler({ nvidiaSmi: writeFakeNvidiaSmi(dir) });
      await until(() => gpu.length >= 6);
      expect(log.messages("warn").some((w) => w.includes("exited (code 3)") && w.includes("restarting"))).toBe(true);
    } finally {
      delete process.env.FAKE_SMI_TICKS;
    }
  });

  it("a missing binary gives one warning and turns the sampler off", async () => {
    const { log } = startSampler({ nvidiaSmi: join(dir, "nope-smi") });
    await until(() => sampler?.backend === "off");
    expect(log.messages("warn")).toHaveLength(1);
    expect(log.messages("warn")[0]).toContain("GPU sampler disabled");
  });

  it("auto falls back to amd-smi; both missing → off with both reasons", async () => {
    const { log } = startSampler({ source: "auto", nvidiaSmi: join(dir, "no-nv"), amdSmi: join(dir, "no-amd") });
    await until(() => sampler?.backend === "off");
    expect(log.messages("warn")[0]).toMatch(/no-nv: not found; .*no-amd: not found/);
  });
});

describe("GpuSampler (amd-smi)", () => {
  it("polls amd-smi JSON, picks the first valid power field and skips bystander processes", async () => {
    const { gpu, procs } = startSampler({ source: "auto", nvidiaSmi: join(dir, "none"), amdSmi: writeFakeAmdSmi(dir) });
    await until(() => gpu.length >= 2 && procs.length >= 2);
    expect(sampler?.backend).toBe("amd-smi");
    expect(gpu[0]).toMatchObject({ gpu: 0, util: 42, mem_mb: 2048, power_w: 311 });
    expect(gpu[1]).toMatchObject({ gpu: 2, util: 7, mem_mb: 12, power_w: 0 });
    expect(gpu[0]?.ts).toBe(gpu[1]?.ts);
    expect(procs.slice(0, 2)).toEqual([
      expect.objectContaining({ gpu: 0, pid: 77, name: "python3", mem_mb: 3072 }),
      expect.objectContaining({ gpu: 0, pid: 78, name: "pid 78", mem_mb: 1 }),
    ]);
  });
});
