/**
 * "Why is this empty" (docs/api.md 9.5.3): the table of a run's inputs lives in
 * lib/contracts/health.ts (RUN_INPUTS, shared with the views' empty states); this file
 * says which of them a run has.
 */
import { RUN_INPUT_KEYS, RUN_INPUTS, type InputStatus, type RunInputKey } from "@/lib/contracts/health";
import type { MetricStore } from "@/lib/store/telemetry";

export { RUN_INPUTS };

/** Present/missing per input, each with what needs it and what writes it. */
export async function inputStatus(store: MetricStore, logFiles: number): Promise<Record<RunInputKey, InputStatus>> {
  const fsys = store.fs;
  const nonEmptyDir = async (rel: string) => (await fsys.readdir(rel)).length > 0;
  const present: Record<RunInputKey, () => Promise<boolean>> = {
    dashboard: async () => (await fsys.statOrNull("dashboard"))?.isDirectory() ?? false,
    meta: async () => store.meta() !== null,
    phases: () => store.phases.hasData(),
    metrics: async () => (await store.metrics()).length > 0,
    gpu_util: () => store.gpuUtil.hasData(),
    engine_series: () => store.engine.hasData(),
    topology: async () => (await store.topology()).length > 0,
    trajectories: () => store.trajectories.hasData(),
    rollout_dumps: () => nonEmptyDir("rollout_data"),
    logs: async () => logFiles > 0,
    host: () => nonEmptyDir("dashboard/host"),
  };
  const out = {} as Record<RunInputKey, InputStatus>;
  for (const key of RUN_INPUT_KEYS) {
    const info = RUN_INPUTS[key];
    out[key] = { present: await present[key](), path: info.path, needed_by: [...info.needed_by], written_by: info.written_by };
  }
  return out;
}
