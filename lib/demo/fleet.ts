/**
 * A large colocated GSPO run (telemetry only): `nodes` × 8 GPUs, one Megatron rank per GPU,
 * one SGLang engine (TP=8) per node sharing the same GPUs. Used for the demo's
 * `llama-70b-gspo-64gpu` (1 h) and, longer, for the bench's big run (8+ h).
 *
 * Story the data tells:
 *  - each step: rollout on every engine (long-tailed responses), then the train ranks
 *    wake up, preprocess, compute log-probs / ref log-probs, train, push weights, sleep;
 *  - a straggler GPU (thermally throttled): lowest util, slowest `actor_train`, and the
 *    whole step waits for it;
 *  - near the end (optional) an engine wedges mid-rollout: its kernels spin at 100 %,
 *    its requests never finish, client retries time out as aborted requests, the rollout
 *    and every rank's `train_wait` stay OPEN → the stall watchdog and the abort-storm
 *    alarm fire.
 */
import path from "node:path";
import type { PyValue } from "@/lib/store/format";
import { pyFloat } from "@/lib/store/format";
import type { MetricsRecord } from "@/lib/store/format";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { SimEmitter, gpuUuid, type ClusterSpec, type LaneRef, type SimPhase, DEMO_ENGINE_METRICS } from "./cluster";
import { Rng, clamp, round } from "./prng";

export interface FleetRunOptions {
  name: string;
  /** Newest telemetry timestamp (unix s). */
  endTs: number;
  hours: number;
  seed: number;
  nodes?: number;
  scrapeIntervalS?: number;
  metrics?: readonly string[];
  stall?: boolean;
  /**
   * The run reached its end: meta.json's `num_rollout` is set to the last logged step + 1
   * (the end marker run_status reads, docs/api.md 9.5.2), so it is judged finished.
   */
  finished?: boolean;
  /** Called after each written chunk with the fraction done. */
  onProgress?: (fraction: number) => void;
  /**
   * Write each step as soon as it is simulated instead of simulating the whole run first:
   * memory stays flat however long the run (1024 GPUs × 24 h needs it; the whole-run
   * schedule did not fit a 4 GB heap). Phase closings then draw their arrival delays from
   * a stream of their own, so the bytes differ from the unstreamed run of the same seed
   * (which the demo and the bench's 8 h run keep) but are the same on every machine.
   */
  stream?: boolean;
}

export const FLEET_NODES = (n: number): string[] => Array.from({ length: n }, (_, i) => `10.1.0.${i + 1}`);
export const STRAGGLER: LaneRef = { node: "10.1.0.3", gpu: 5 };
export const HUNG_ENGINE = 6;

export const FLEET_METRICS_FULL = DEMO_ENGINE_METRICS;

/** The demo keeps its size down with a shorter list (`--dashboard-sglang-metrics`). */
export const FLEET_METRICS_DEMO = [
  "sglang_num_running_reqs",
  "sglang_num_queue_reqs",
  "sglang_gen_throughput",
  "sglang_token_usage",
  "sglang_generation_tokens_total",
  "sglang_num_requests_total",
  "sglang_num_aborted_requests_total",
  "sglang_time_to_first_token_seconds_sum",
  "sglang_time_to_first_token_seconds_count",
];

const GPUS = 8;
const INIT_S = 236;
const SAMPLES_PER_ENGINE = 64;
const MAX_RESPONSE = 4096;

const ACT: Record<string, [number, number, number]> = {
  wake_up: [18, 46, 41_000],
  data_preprocess: [4, 18, 52_000],
  log_probs: [72, 89, 61_200],
  ref_log_probs: [71, 88, 61_700],
  actor_train: [91, 99, 74_300],
  update_weights_implementation: [26, 52, 66_800],
  sleep: [8, 28, 38_000],
};

function fleetArgs(name: string, nodes: number): Record<string, PyValue> {
  return {
    wandb_group: name,
    wandb_team: "post-training",
    wandb_project: "llama-gspo",
    wandb_run_id: null,
    wandb_host: null,
    colocate: true,
    num_gpus_per_node: GPUS,
    actor_num_nodes: nodes,
    actor_num_gpus_per_node: GPUS,
    rollout_num_gpus: nodes * GPUS,
    rollout_num_gpus_per_engine: GPUS,
    rollout_batch_size: (nodes * SAMPLES_PER_ENGINE) / 8,
    n_samples_per_prompt: 8,
    rollout_max_response_len: MAX_RESPONSE,
    hf_checkpoint: "meta-llama/Llama-3.3-70B-Instruct",
    sglang_max_running_requests: 96,
    sglang_mem_fraction_static: 0.7,
    sglang_load_balance_method: "round_robin",
    use_miles_router: false,
    router_dp_aware: false,
    router_policy: "round_robin",
    sglang_router_policy: null,
    router_assignment_mode: null,
  };
}

export function fleetCluster(nodes: number, scrapeIntervalS: number, metrics: readonly string[]): ClusterSpec {
  const names = FLEET_NODES(nodes);
  return {
    nodes: names,
    gpusPerNode: GPUS,
    engines: names.map((node) => ({
      addr: `http://${node}:30000`,
      lanes: Array.from({ length: GPUS }, (_, gpu) => ({ node, gpu })),
      dpRanks: 1,
      kvTokens: 190_000,
      cacheHit: 0.07,
      saturation: 22,
    })),
    colocate: true,
    memTotalMb: 81559,
    scrapeIntervalS,
    metrics,
    laneScale: new Map([[`${STRAGGLER.node}:${STRAGGLER.gpu}`, 0.62]]),
    processes: null,
  };
}

/** Write the run under `runDir`; returns the number of steps written. */
export async function writeFleetRun(runDir: string, o: FleetRunOptions): Promise<number> {
  const nodes = o.nodes ?? 8;
  const scrape = o.scrapeIntervalS ?? 2;
  const metrics = o.metrics ?? FLEET_METRICS_FULL;
  const duration = Math.round(o.hours * 3600);
  const base = Math.floor(o.endTs) - duration + 0.5;
  const end = base + duration;
  const root = new Rng(o.seed);
  const rng = root.fork("fleet");
  const writer = await RunWriter.open({
    dashDir: path.join(runDir, "dashboard"),
    meta: { run_name: o.name, start_ts: base, args: fleetArgs(o.name, nodes) },
  });
  const spec = fleetCluster(nodes, scrape, metrics);
  const em = new SimEmitter(writer, spec, {
    gpuStart: Math.ceil(base + 6.2),
    origin: Math.floor(base),
    rng: root.fork("emit"),
    delayRng: o.stream ? root.fork("phase-delay") : undefined,
  });
  const lanes = em.lanesList;
  const rankOf = (l: LaneRef) => spec.nodes.indexOf(l.node) * GPUS + l.gpu;
  const driver = spec.nodes[0]!;

  let t = base + INIT_S;
  em.addTopology({
    ts: round(t - 2.3, 3),
    engines: spec.engines.map((e, i) => ({
      addr: e.addr,
      worker_type: "regular",
      engine_rank: i,
      gpus: e.lanes.map((l): [string, number] => [l.node, l.gpu]),
      gpu_uuids: e.lanes.map((l) => gpuUuid(root.fork(`uuid${l.node}:${l.gpu}`))),
    })),
  });
  const waitSince = new Map<number, number>(lanes.map((l) => [rankOf(l), base + INIT_S - 14 - rng.float(0, 3)]));
  const stallAt = o.stall ? end - 34 * 60 : Infinity;
  let step = 0;
  let lastLogged = -1;
  let emitted = base;
  while (t < end) {
    const srng = root.fork(`step${step}`);
    const r0 = t;
    const stalled = r0 >= stallAt;
    // ---- rollout: 64 single-turn samples per engine, long-tailed lengths
    let lastEnd = r0;
    let genTokens = 0;
    let truncated = 0;
    let rewardSum = 0;
    const hangAt = r0 + 24;
    for (let e = 0; e < spec.engines.length; e++) {
      const erng = srng.fork(`e${e}`);
      for (let i = 0; i < SAMPLES_PER_ENGINE; i++) {
        const want = Math.round(Math.exp(erng.normal(7.0, 0.6)) + 120 + 4 * step);
        const tokens = Math.min(MAX_RESPONSE, want);
        if (tokens === MAX_RESPONSE) truncated++;
        const q0 = r0 + erng.float(0.05, 1.2);
        const t0 = q0 + erng.float(0.02, 0.3);
        const ttft = round(0.18 + erng.float(0, 0.25), 4);
        const t1 = t0 + ttft + tokens / erng.float(42, 52);
        const hung = stalled && e === HUNG_ENGINE && t1 > hangAt;
        em.addRequest({
          engine: e,
          dp: 0,
          q0,
          t0,
          t1: hung ? Infinity : t1,
          promptTokens: erng.int(180, 620),
          completionTokens: hung ? 0 : tokens,
          ttft,
          aborted: false,
        });
        if (!hung) {
          lastEnd = Math.max(lastEnd, t1);
          genTokens += tokens;
          rewardSum += erng.chance(clamp(0.28 + 0.022 * step, 0, 0.8)) && tokens < MAX_RESPONSE ? 1 : 0;
        }
      }
    }
    const rm = (name: string, t0: number, t1: number | null): SimPhase => ({ name, t0: round(t0, 3), t1: t1 === null ? null : round(t1, 3), node: driver, gpus: [], rank: -1, role: "rollout_manager" });
    if (stalled) {
      em.hangEngine(HUNG_ENGINE, hangAt);
      em.addPhase(rm("rollout", r0, null));
      // Client retries to the wedged engine queue up and time out (aborted after 60 s).
      const arng = srng.fork("retries");
      for (let q = hangAt + 90; q < end + 120; q += arng.float(1.2, 2.6)) {
        em.addRequest({ engine: HUNG_ENGINE, dp: 0, q0: q, t0: Infinity, t1: q + 60, promptTokens: 400, completionTokens: 0, ttft: 0, aborted: true });
      }
      for (const l of lanes) {
        const rank = rankOf(l);
        em.addPhase({ name: "train_wait", t0: round(waitSince.get(rank)!, 3), t1: null, node: l.node, gpus: [l.gpu], rank, role: "train" });
      }
      break;
    }
    const r1 = lastEnd + srng.float(0.4, 1.1);
    em.addPhase(rm("rollout", r0, r1));
    // ---- train (every rank); the straggler's actor_train runs long and everyone waits for it
    const wake0 = r1 + 0.6;
    const wake1 = wake0 + srng.float(7, 9.5);
    const dp1 = wake1 + srng.float(2.4, 3.6);
    const lp1 = dp1 + srng.float(13, 16);
    const ref1 = lp1 + srng.float(13, 16);
    const actorBase = srng.float(38, 43) * (1 + 0.002 * Math.min(step, 60));
    const actorSlow = actorBase * 1.07;
    const train1 = ref1 + actorSlow + 0.4;
    const uw1 = train1 + srng.float(12, 15.5);
    const sleep1 = uw1 + srng.float(4, 6);
    for (const l of lanes) {
      const rank = rankOf(l);
      const slow = l.node === STRAGGLER.node && l.gpu === STRAGGLER.gpu;
      const j = () => srng.float(0, 0.08);
      const add = (name: string, a: number, b: number) => {
        em.addPhase({ name, t0: round(a, 3), t1: round(b, 3), node: l.node, gpus: [l.gpu], rank, role: "train" });
        const act = ACT[name];
        if (act) em.addActivity(l, { t0: a, t1: b, utilLo: act[0], utilHi: act[1], memMb: act[2] });
      };
      add("train_wait", waitSince.get(rank)!, wake0 - j());
      add("wake_up", wake0, wake1 - j());
      add("data_preprocess", wake1, dp1 - j());
      em.addPhase({ name: "train", t0: round(dp1, 3), t1: round(train1, 3), node: l.node, gpus: [l.gpu], rank, role: "train" });
      add("log_probs", dp1 + 0.05, lp1 - j());
      add("ref_log_probs", lp1 + 0.02, ref1 - j());
      add("actor_train", ref1 + 0.05, ref1 + (slow ? actorSlow : actorBase + srng.float(0, 0.6)));
      em.addPhase({ name: "update_weights", t0: round(train1 + 0.05, 3), t1: round(uw1, 3), node: l.node, gpus: [l.gpu], rank, role: "train" });
      add("update_weights_implementation", train1 + 0.3, uw1 - 0.2);
      add("sleep", uw1 + 0.05, sleep1 - j());
      waitSince.set(rank, sleep1 + 0.01);
    }
    em.addEngineUpdate(train1 + 0.3, uw1 - 0.2);
    // ---- metrics
    const mrng = srng.fork("m");
    const trainTime = train1 - dp1;
    const stepTime = sleep1 + 1 - r0;
    const trainSteps = 4;
    for (let k = 0; k < trainSteps; k++) {
      const ts = round(ref1 + (actorSlow * (k + 1)) / trainSteps, 3);
      const s = step * trainSteps + k;
      em.addMetrics({
        ts,
        step_key: "train/step",
        step: s,
        metrics: {
          "train/loss": round(0.031 - 0.0004 * step + mrng.normal(0, 0.004), 6),
          "train/pg_loss": round(mrng.normal(0.002, 0.004), 6),
          "train/pg_clipfrac": round(Math.max(0, mrng.normal(0.0009, 0.0003)), 7),
          "train/ppo_kl": round(mrng.normal(0.0002, 0.0001), 7),
          "train/grad_norm": round(0.09 + mrng.exp(0.03), 5),
          "train/lr-pg": 5e-7,
          "train/step": s,
        },
      });
    }
    const mfu = round(0.372 + mrng.normal(0, 0.008) - (step === 0 ? 0.06 : 0), 4);
    const n = spec.engines.length * SAMPLES_PER_ENGINE;
    const rec: MetricsRecord = {
      ts: round(sleep1 + 0.8, 3),
      step_key: "rollout/step",
      step,
      metrics: {
        "rollout/raw_reward": round(rewardSum / n, 6),
        "rollout/response_lengths": round(genTokens / n, 3),
        "rollout/truncated": round(truncated / n, 6),
        "perf/rollout_time": round(r1 - r0, 4),
        "perf/wake_up_time": round(wake1 - wake0, 4),
        "perf/data_preprocess_time": round(dp1 - wake1, 4),
        "perf/log_probs_time": round(lp1 - dp1, 4),
        "perf/ref_log_probs_time": round(ref1 - lp1, 4),
        "perf/actor_train_time": round(actorSlow, 4),
        "perf/train_time": round(trainTime, 4),
        "perf/update_weights_time": round(uw1 - train1, 4),
        "perf/sleep_time": round(sleep1 - uw1, 4),
        "perf/step_time": round(stepTime, 4),
        "perf/wait_time_ratio": round((r1 - r0) / stepTime, 6),
        "perf/actor_train_mfu": mfu,
        "perf/mfu_peak_tflops": pyFloat(989),
        "perf/actor_train_tflops": round(mfu * 989, 3),
        "perf/tokens_per_gpu_per_sec": round(genTokens / (r1 - r0) / (nodes * GPUS), 3),
        "rollout/step": step,
      },
    };
    em.addMetrics(rec);
    if (rec.ts <= end) lastLogged = step;
    t = sleep1 + srng.float(0.6, 1.4);
    step++;
    if (o.stream) {
      // Nothing later in the loop lands before the next step's start or a rank's next
      // train_wait (its OPEN marker arrives at its t0), so everything up to there is final.
      let horizon = t;
      for (const w of waitSince.values()) horizon = Math.min(horizon, w);
      const upTo = Math.min(horizon, end);
      em.emitUntil(upTo);
      emitted = upTo;
      await writer.flush();
      o.onProgress?.((upTo - base) / duration);
    }
  }
  // Emit the rest in 5-min chunks (all of the run unless streamed) so memory stays flat.
  const chunk = 300;
  for (let c = Math.floor(base) + chunk * (1 + Math.floor((emitted - base) / chunk)); ; c += chunk) {
    const upTo = Math.min(c, end);
    em.emitUntil(upTo);
    await writer.flush();
    o.onProgress?.((upTo - base) / duration);
    if (upTo >= end) break;
  }
  if (o.finished && lastLogged >= 0) {
    await writer.writeMeta({ run_name: o.name, start_ts: base, args: { ...fleetArgs(o.name, nodes), num_rollout: lastLogged + 1 } });
  }
  await writer.close(); // the phase hour index of the hours not indexed yet (docs/formats.md §4.16)
  return step;
}
