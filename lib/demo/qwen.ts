/**
 * `qwen3-4b-grpo-demo`: an agentic GRPO run on one 8-GPU node, non-colocated — 4 Megatron
 * ranks (TP=2 → 2 DP shards) on GPUs 0–3, two SGLang engines (TP=2, 2 dp-attention ranks
 * each) on GPUs 4–7 — driven by miles' one-step-off-policy loop with partial rollout:
 *
 *   rollout k+1 is generated while step k trains; update_weights waits for that rollout;
 *   the unfinished tail of a rollout is aborted and resumed in the next one (so its turns
 *   carry two weight versions) — that backlog is the data buffer.
 *
 * Everything is derived from the samples: a turn is one engine request (running
 * requests, throughput and counters follow), the slowest sample ends the rollout (the
 * long tail), lifecycle events replay each attempt. Steps 0..7 are trained and dumped;
 * rollout 8 is still in flight when the history ends (its OPEN marker is left open for
 * the live writer to close).
 */
import path from "node:path";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { pyFloat, type PyValue } from "@/lib/store/format";
import type { MetricsRecord, TopologySnapshot, TrajectoryEvent } from "@/lib/store/format";
import { SimEmitter, gpuUuid, type ClusterSpec, type LaneRef, type SimPhase, DEMO_ENGINE_METRICS } from "./cluster";
import { agenticSample, sampleEvent, writeRolloutDump, writeTrainDumps, type DemoSample } from "./dumps";
import { Rng, round } from "./prng";
import { corpusWords, makeConversation } from "./text";
import { DemoTokenizer } from "./tokenizer";

export const QWEN_RUN = "qwen3-4b-grpo-demo";
export const QWEN_NODE = "10.8.0.11";
export const QWEN_TRAIN_RANKS = 4;
const TP = 2;
const GROUPS = 8;
const N_PER_PROMPT = 8;
const MAX_RESPONSE = 8192;
const STEPS = 8;
const CONCURRENCY = 48;
const INIT_S = 74;
const EVAL_AFTER_STEP = 3;

export const QWEN_ENGINES = [
  { addr: `http://${QWEN_NODE}:15000`, gpus: [4, 5] },
  { addr: `http://${QWEN_NODE}:15004`, gpus: [6, 7] },
];

export const QWEN_METRICS = DEMO_ENGINE_METRICS;

export function qwenArgs(): Record<string, PyValue> {
  return {
    wandb_group: QWEN_RUN,
    wandb_team: null,
    wandb_project: "rlboard-demo",
    wandb_run_id: null,
    wandb_host: null,
    colocate: false,
    num_gpus_per_node: 8,
    actor_num_nodes: 1,
    actor_num_gpus_per_node: QWEN_TRAIN_RANKS,
    rollout_num_gpus: 4,
    rollout_num_gpus_per_engine: 2,
    rollout_batch_size: GROUPS,
    n_samples_per_prompt: N_PER_PROMPT,
    rollout_max_response_len: MAX_RESPONSE,
    hf_checkpoint: "Qwen/Qwen3-4B",
    sglang_max_running_requests: 64,
    sglang_mem_fraction_static: 0.85,
    sglang_load_balance_method: "round_robin",
    use_miles_router: false,
    router_dp_aware: true,
    router_policy: "cache_aware",
    sglang_router_policy: null,
    router_assignment_mode: null,
  };
}

/** The demo's engines as a topology snapshot lists them (docs/formats.md, topology records). */
export function qwenTopologyEngines(rng: Rng): TopologySnapshot["engines"] {
  return QWEN_ENGINES.map((e, i) => ({
    addr: e.addr,
    worker_type: "regular",
    engine_rank: i,
    gpus: e.gpus.map((g): [string, number] => [QWEN_NODE, g]),
    gpu_uuids: e.gpus.map((g) => gpuUuid(rng.fork(`uuid${g}`))),
  }));
}

export function qwenCluster(): ClusterSpec {
  return {
    nodes: [QWEN_NODE],
    gpusPerNode: 8,
    engines: QWEN_ENGINES.map((e) => ({
      addr: e.addr,
      lanes: e.gpus.map((gpu) => ({ node: QWEN_NODE, gpu })),
      dpRanks: 2,
      kvTokens: 180_000,
      cacheHit: 0.62,
      saturation: 10,
    })),
    colocate: false,
    memTotalMb: 81559,
    scrapeIntervalS: 2,
    metrics: QWEN_METRICS,
    processes: (lane) =>
      lane.gpu < QWEN_TRAIN_RANKS
        ? [{ pid: 41200 + lane.gpu, name: "ray::MegatronTrainRayActor", share: 1 }]
        : [{ pid: 52800 + lane.gpu, name: `sglang::scheduler_DP${lane.gpu % 2}_TP${lane.gpu % 2}`, share: 1 }],
  };
}

export const trainLane = (rank: number): LaneRef => ({ node: QWEN_NODE, gpu: rank });

/** Train-side leaf phases → GPU activity levels (util range, MiB). */
export const TRAIN_ACTIVITY: Record<string, [number, number, number]> = {
  data_preprocess: [4, 22, 38_500],
  log_probs: [62, 81, 52_300],
  ref_log_probs: [60, 79, 52_900],
  actor_train: [86, 99, 68_400],
  update_weights_implementation: [24, 46, 61_000],
};

/** One turn's timing inside an attempt. */
interface TurnTiming {
  turn: number;
  q0: number;
  t0: number;
  t1: number;
  ttft: number;
  toolEnd: number | null;
}

interface Attempt {
  sample: DemoSample;
  engine: number;
  dp: number;
  start: number;
  admitted: number;
  end: number;
  status: string;
  turns: TurnTiming[];
  /** Versions of the turns of this attempt. */
  versions: string[];
}

interface StepPlan {
  rolloutId: number;
  r0: number;
  r1: number;
  samples: DemoSample[];
  attempts: Attempt[];
  trainStart: number;
  trainEnd: number;
  uwStart: number;
  uwEnd: number;
}

const PROMPT_OF = (s: DemoSample) => s.tokens.length - s.responseLength;

/**
 * Time the attempts of one rollout from `r0`: at most CONCURRENCY samples in flight, each
 * turn = prefill + decode, tool calls in between. `firstTurn` > 0 resumes partial samples.
 */
function timeAttempts(
  rng: Rng,
  items: { sample: DemoSample; firstTurn: number; lastTurn: number; runaway: boolean }[],
  r0: number,
  slot0: number,
): Attempt[] {
  const slots: number[] = [];
  const out: Attempt[] = [];
  items.forEach((it, i) => {
    const s = it.sample;
    slots.sort((a, b) => a - b);
    const start = r0 + rng.float(0.01, 0.35) + i * 0.004;
    const admitted = slots.length < CONCURRENCY ? start + rng.float(0.01, 0.05) : Math.max(start, slots.shift()!) + 0.01;
    let cursor = admitted + 0.02;
    let promptSoFar = PROMPT_OF(s);
    for (let t = 0; t < it.firstTurn; t++) promptSoFar += (s.turnTokens[t] ?? 0) + 60;
    const turns: TurnTiming[] = [];
    for (let t = it.firstTurn; t <= it.lastTurn; t++) {
      const tokens = s.turnTokens[t] ?? 0;
      const speed = it.runaway ? 118 : rng.float(24, 42);
      const ttft = round(0.04 + promptSoFar / 24_000 + rng.float(0, 0.05), 4);
      const q0 = cursor;
      const t0 = cursor + rng.float(0, 0.03);
      const t1 = t0 + ttft + tokens / speed;
      const tool = s.toolSeconds[t];
      const toolEnd = tool !== undefined ? t1 + tool : null;
      turns.push({ turn: t + 1, q0, t0, t1, ttft, toolEnd });
      cursor = (toolEnd ?? t1) + 0.02;
      promptSoFar += tokens + 60;
    }
    const lastTurn = turns[turns.length - 1]!;
    const end = lastTurn.t1 + rng.float(0.02, 0.08);
    slots.push(end);
    const slot = slot0 + i;
    out.push({
      sample: s,
      engine: slot % 2,
      dp: Math.floor(slot / 2) % 2,
      start,
      admitted,
      end,
      status: s.status,
      turns,
      versions: [],
    });
  });
  return out;
}

export interface QwenPlan {
  steps: StepPlan[];
  /** Resumed attempts of partial samples (their first turns ran in the previous rollout). */
  aborted: Attempt[];
  evalRollout: { t0: number; t1: number; samples: DemoSample[] } | null;
  end: number;
  tokenizer: DemoTokenizer;
}

/** Plan the whole history in seconds since the collector start (t = 0). */
export function planQwen(seed: number): QwenPlan {
  const root = new Rng(seed);
  const tok = new DemoTokenizer(corpusWords());
  const steps: StepPlan[] = [];
  const aborted: Attempt[] = [];
  const updates: number[] = []; // update_weights end times → weight versions
  const versionAt = (t: number) => String(updates.filter((u) => u <= t).length);
  let nextIndex = 0;
  let nextGroup = 0;
  let carried: { sample: DemoSample; firstTurn: number }[] = [];

  /** One rollout from `r0`: fresh groups + resumed partial samples; the over-sampled extra group is aborted. */
  const rollout = (rolloutId: number, r0: number): StepPlan => {
    const rng = root.fork(`step${rolloutId}`);
    const pCorrect = 0.3 + 0.045 * rolloutId;
    const items: { sample: DemoSample; firstTurn: number; lastTurn: number; runaway: boolean }[] = carried.map((c) => ({
      ...c,
      lastTurn: c.sample.turnTokens.length - 1,
      runaway: false,
    }));
    const groupsNeeded = GROUPS - new Set(carried.map((c) => c.sample.groupIndex)).size;
    for (let g = 0; g < groupsNeeded; g++) {
      const group = nextGroup++;
      const family = rng.pick(["math", "math", "search", "code"]);
      for (let j = 0; j < N_PER_PROMPT; j++) {
        const runaway = rolloutId === 5 && g === 2 && j === 5;
        const conv = makeConversation(rng.fork(`c${group}.${j}`), { pCorrect, runaway, family });
        const s = agenticSample(rng.fork(`s${group}.${j}`), tok, conv, {
          index: nextIndex++,
          groupIndex: group,
          maxResponseLen: MAX_RESPONSE,
          versionOfTurn: () => "",
        });
        items.push({ sample: s, firstTurn: 0, lastTurn: s.turnTokens.length - 1, runaway });
      }
    }
    const attempts = timeAttempts(rng, items, r0, rolloutId * 7);
    for (const a of attempts) {
      const prior = a.sample.weightVersions.filter((v) => v !== "");
      a.versions = a.turns.map((t) => versionAt(t.t0));
      a.sample.weightVersions = [...prior, ...a.versions];
    }
    const r1 = Math.max(...attempts.map((a) => a.end)) + rng.float(0.3, 0.8);
    const samples = attempts.map((a) => a.sample).sort((x, y) => x.groupIndex - y.groupIndex || x.index - y.index);
    // Partial rollout: one extra group was over-sampled; it is aborted at r1 after its
    // first turn and resumed, with newer weights, in the next rollout.
    carried = [];
    const group = nextGroup++;
    const family = rng.pick(["math", "code"]);
    for (let j = 0; j < N_PER_PROMPT; j++) {
      const conv = makeConversation(rng.fork(`p${group}.${j}`), { pCorrect, family });
      const s = agenticSample(rng.fork(`ps${group}.${j}`), tok, conv, {
        index: nextIndex++,
        groupIndex: group,
        maxResponseLen: MAX_RESPONSE,
        versionOfTurn: () => "",
      });
      if (s.turnTokens.length < 2) continue;
      const startAt = r1 - (s.turnTokens[0] ?? 0) / 40 - rng.float(2, 5);
      const at = timeAttempts(rng, [{ sample: s, firstTurn: 0, lastTurn: 0, runaway: false }], startAt, 3 + j)[0]!;
      at.end = r1 - 0.05;
      at.status = "aborted";
      at.versions = [versionAt(at.turns[0]!.t0)];
      s.weightVersions = [...at.versions];
      aborted.push(at);
      carried.push({ sample: s, firstTurn: 1 });
    }
    return { rolloutId, r0, r1, samples, attempts, trainStart: 0, trainEnd: 0, uwStart: 0, uwEnd: 0 };
  };

  // miles train_async: rollout k+1 generates while step k trains; update_weights waits for it.
  steps.push(rollout(0, INIT_S));
  let begin = steps[0]!.r1;
  let evalRollout: QwenPlan["evalRollout"] = null;
  for (let k = 0; k < STEPS; k++) {
    const rng = root.fork(`train${k}`);
    const next = rollout(k + 1, begin + rng.float(0.05, 0.2));
    steps.push(next);
    const cur = steps[k]!;
    cur.trainStart = begin + rng.float(0.2, 0.5);
    cur.trainEnd = cur.trainStart + rng.float(33, 40) + (k === 4 ? 9 : 0);
    if (k === STEPS - 1) break; // the history ends while this update still waits for rollout k+1
    cur.uwStart = Math.max(cur.trainEnd, next.r1) + rng.float(0.1, 0.3);
    cur.uwEnd = cur.uwStart + rng.float(2.6, 3.8);
    updates.push(cur.uwEnd);
    begin = cur.uwEnd;
    if (k === EVAL_AFTER_STEP) {
      const t0 = begin + 0.1;
      const evalSamples: DemoSample[] = [];
      for (let i = 0; i < 16; i++) {
        const conv = makeConversation(root.fork(`eval${i}`), { pCorrect: 0.55 });
        evalSamples.push(
          agenticSample(root.fork(`evs${i}`), tok, conv, {
            index: i,
            groupIndex: i,
            maxResponseLen: MAX_RESPONSE,
            versionOfTurn: () => versionAt(t0),
          }),
        );
      }
      const t1 = t0 + rng.float(14, 19);
      evalRollout = { t0, t1, samples: evalSamples };
      begin = t1 + 0.2;
    }
  }
  const last = steps[STEPS - 1]!;
  const inflight = steps[STEPS]!;
  const end = Math.max(last.trainEnd + 1, Math.min(last.trainEnd + 6, inflight.r1 - 2));
  return { steps, aborted, evalRollout, end, tokenizer: tok };
}

// ---------------------------------------------------------------------------------
// telemetry

function trainPhases(rank: number, s: StepPlan, rng: Rng, at: (t: number) => number): SimPhase[] {
  const node = QWEN_NODE;
  const gpus = [rank];
  const ph = (name: string, t0: number, t1: number | null): SimPhase => ({
    name,
    t0: at(t0),
    t1: t1 === null ? null : at(t1),
    node,
    gpus,
    rank,
    role: "train",
  });
  const out: SimPhase[] = [];
  const dp0 = s.trainStart;
  const dp1 = dp0 + 1.6 + 0.6 * rng.next();
  const lp1 = dp1 + 5.8 + 0.8 * rng.next();
  const ref1 = lp1 + 5.6 + 0.8 * rng.next();
  const tEnd = s.trainEnd;
  out.push(ph("data_preprocess", dp0, dp1));
  out.push(ph("train", dp1, tEnd));
  out.push(ph("log_probs", dp1 + 0.05, lp1));
  out.push(ph("ref_log_probs", lp1 + 0.02, ref1));
  out.push(ph("actor_train", ref1 + 0.05, tEnd - 0.1));
  return out;
}

/** Write the dashboard streams of the plan, ending at `nowS`. Returns the emitter's writer. */
export async function writeQwenTelemetry(runDir: string, plan: QwenPlan, nowS: number, seed: number): Promise<void> {
  const base = Math.floor(nowS - plan.end) + 0.25;
  const at = (t: number) => round(base + t, 3);
  const rng = new Rng(seed).fork("telemetry");
  const writer = await RunWriter.open({
    dashDir: path.join(runDir, "dashboard"),
    meta: { run_name: QWEN_RUN, start_ts: base, args: qwenArgs() },
  });
  const spec = qwenCluster();
  const em = new SimEmitter(writer, spec, { gpuStart: Math.ceil(base + 3.5), origin: Math.floor(base), rng: rng.fork("emit") });
  const first = plan.steps[0]!;
  em.addTopology({
    ts: at(first.r0 - 0.4),
    engines: qwenTopologyEngines(rng),
  });
  const rm = (name: string, t0: number, t1: number | null): SimPhase => ({
    name,
    t0: at(t0),
    t1: t1 === null ? null : at(t1),
    node: QWEN_NODE,
    gpus: [],
    rank: -1,
    role: "rollout_manager",
  });
  // train_wait opens right after actor init and after every train call.
  const waitOpen: number[] = new Array<number>(QWEN_TRAIN_RANKS).fill(INIT_S - 9);
  for (const s of plan.steps) {
    const inflight = s.rolloutId === STEPS && s.r1 > plan.end;
    em.addPhase(rm("rollout", s.r0, inflight ? null : s.r1));
    em.addDataBuffer({ ts: at(s.r1 + 0.05), length: 1 + (s.rolloutId % 3 === 2 ? 1 : 0) });
    if (s.rolloutId < STEPS) {
      for (let rank = 0; rank < QWEN_TRAIN_RANKS; rank++) {
        const prng = rng.fork(`tp${s.rolloutId}.${Math.floor(rank / TP)}`);
        em.addPhase({ name: "train_wait", t0: at(waitOpen[rank]!), t1: at(s.trainStart - 0.02), node: QWEN_NODE, gpus: [rank], rank, role: "train" });
        for (const p of trainPhases(rank, s, prng, at)) {
          em.addPhase(p);
          const act = TRAIN_ACTIVITY[p.name];
          if (act && p.t1 !== null) em.addActivity(trainLane(rank), { t0: p.t0, t1: p.t1, utilLo: act[0], utilHi: act[1], memMb: act[2] });
        }
        if (s.uwEnd > 0) {
          em.addPhase({ name: "update_weights", t0: at(s.uwStart), t1: at(s.uwEnd), node: QWEN_NODE, gpus: [rank], rank, role: "train" });
          const i0 = s.uwStart + 0.15;
          const i1 = s.uwEnd - 0.1;
          em.addPhase({ name: "update_weights_implementation", t0: at(i0), t1: at(i1), node: QWEN_NODE, gpus: [rank], rank, role: "train" });
          const act = TRAIN_ACTIVITY.update_weights_implementation!;
          em.addActivity(trainLane(rank), { t0: at(i0), t1: at(i1), utilLo: act[0], utilHi: act[1], memMb: act[2] });
        }
        waitOpen[rank] = s.trainEnd + 0.01;
      }
      if (s.uwEnd > 0) em.addEngineUpdate(at(s.uwStart + 0.15), at(s.uwEnd - 0.1));
      for (const r of stepMetrics(s, plan, rng.fork(`m${s.rolloutId}`), at)) em.addMetrics(r);
    }
    for (const a of s.attempts) feedAttempt(em, a, at, false);
  }
  for (const a of plan.aborted) feedAttempt(em, a, at, true);
  // The still-open train_wait of every rank (the in-flight rollout feeds the next step).
  for (let rank = 0; rank < QWEN_TRAIN_RANKS; rank++) {
    em.addPhase({ name: "train_wait", t0: at(waitOpen[rank]!), t1: null, node: QWEN_NODE, gpus: [rank], rank, role: "train" });
  }
  if (plan.evalRollout) {
    const ev = plan.evalRollout;
    em.addPhase(rm("eval_rollout", ev.t0, ev.t1));
    ev.samples.forEach((s, i) => {
      let t = ev.t0 + 0.2 + i * 0.01;
      s.turnTokens.forEach((n, k) => {
        const ttft = 0.06;
        const t1 = Math.min(ev.t1 - 0.3, t + ttft + n / 52);
        em.addRequest({ engine: i % 2, dp: Math.floor(i / 2) % 2, q0: at(t), t0: at(t), t1: at(t1), promptTokens: PROMPT_OF(s), completionTokens: n, ttft, aborted: false });
        t = t1 + (s.toolSeconds[k] ?? 0);
      });
    });
    em.addMetrics({
      ts: at(ev.t1 + 0.4),
      step_key: "eval/step",
      step: EVAL_AFTER_STEP,
      metrics: {
        "eval/agentic_bench": round(ev.samples.filter((s) => s.reward > 0).length / ev.samples.length, 4),
        "eval/agentic_bench/response_len/mean": round(ev.samples.reduce((a, s) => a + s.responseLength, 0) / ev.samples.length, 2),
        "eval/step": EVAL_AFTER_STEP,
      },
    });
  }
  em.emitUntil(at(plan.end));
  await writer.close(); // with the phase hour index (docs/formats.md §4.16)
}

function feedAttempt(em: SimEmitter, a: Attempt, at: (t: number) => number, aborted: boolean): void {
  const s = a.sample;
  const ev = (ts: number, kind: TrajectoryEvent["kind"], turn: number, version: string, detail = "") => sampleEvent(s, at(ts), kind, turn, version, detail);
  const versionBefore = (k: number) => (k === 0 ? (s.weightVersions.length > a.versions.length ? s.weightVersions[0]! : "") : a.versions[k - 1]!);
  const events: TrajectoryEvent[] = [ev(a.start, "attempt_start", -1, versionBefore(0)), ev(a.admitted, "gen_start", -1, versionBefore(0))];
  a.turns.forEach((t, k) => {
    // The generator emits a turn's gen pair right after the response, before the
    // response's weight version is appended to the sample (docs/formats.md §4.8).
    const before = versionBefore(k);
    events.push(ev(t.t0, "gen_start", t.turn, before), ev(t.t1, "gen_end", t.turn, before, String(s.turnTokens[t.turn - 1] ?? "")));
    const v = a.versions[k]!;
    if (t.toolEnd !== null && !(aborted && k === a.turns.length - 1 && t.toolEnd > a.end)) {
      events.push(ev(t.t1, "tool_start", t.turn, v, "1 calls"), ev(t.toolEnd, "tool_end", t.turn, v, "1 calls"));
    } else if (t.toolEnd !== null) {
      events.push(ev(t.t1, "tool_start", t.turn, v, "1 calls"));
    }
    const promptSoFar = PROMPT_OF(s) + s.turnTokens.slice(0, t.turn - 1).reduce((x, y) => x + y + 60, 0);
    em.addRequest({
      engine: a.engine,
      dp: a.dp,
      q0: at(t.q0),
      t0: at(t.t0),
      t1: at(Math.min(t.t1, a.end)),
      promptTokens: promptSoFar,
      completionTokens: s.turnTokens[t.turn - 1] ?? 0,
      ttft: t.ttft,
      aborted: false,
    });
  });
  events.push(ev(a.end, "attempt_end", -1, a.versions[a.versions.length - 1] ?? "", a.status));
  // Emission order: per-turn pairs are sent when the response arrives; batches of ≤ 2 s.
  for (const e of events) em.addTrajectory(e, e.ts + 0.5);
}

function stepMetrics(s: StepPlan, plan: QwenPlan, rng: Rng, at: (t: number) => number): MetricsRecord[] {
  const n = s.samples.length;
  const mean = (f: (x: DemoSample) => number) => s.samples.reduce((a, x) => a + f(x), 0) / n;
  const rolloutTime = s.r1 - s.r0;
  const trainTime = s.trainEnd - s.trainStart;
  const prev = plan.steps[s.rolloutId - 1];
  const stepTime = prev ? s.trainEnd - prev.trainEnd : s.trainEnd - s.r0;
  const waitTime = Math.max(0, s.trainStart - (prev ? prev.trainEnd : s.r0));
  const out: MetricsRecord[] = [];
  const nTrain = 2;
  const actor0 = s.trainStart + 14;
  for (let j = 0; j < nTrain; j++) {
    const step = s.rolloutId * nTrain + j;
    const nan = step === 9;
    out.push({
      ts: at(actor0 + ((s.trainEnd - actor0) * (j + 1)) / nTrain),
      step_key: "train/step",
      step,
      metrics: {
        "train/loss": nan ? NaN : round(0.012 - 0.0009 * s.rolloutId + rng.normal(0, 0.004), 6),
        "train/pg_loss": nan ? NaN : round(rng.normal(0.004, 0.006), 6),
        "train/pg_clipfrac": round(Math.max(0, rng.normal(0.0021, 0.0006)), 6),
        "train/ppo_kl": round(rng.normal(0.0004, 0.0002), 7),
        "train/kl_loss": round(0.0008 + 0.00035 * s.rolloutId + rng.normal(0, 0.0001), 7),
        "train/entropy_loss": round(0.41 - 0.011 * s.rolloutId + rng.normal(0, 0.008), 5),
        "train/grad_norm": nan ? Infinity : round(0.21 + rng.exp(0.08), 5),
        "train/lr-pg": 1e-6,
        "train/step": step,
      },
    });
  }
  const mfu = round(0.305 + rng.normal(0, 0.012) - (s.rolloutId === 0 ? 0.07 : 0), 4);
  out.push({
    ts: at(s.trainEnd + 0.3),
    step_key: "rollout/step",
    step: s.rolloutId,
    metrics: {
      "rollout/raw_reward": round(mean((x) => x.reward), 6),
      "rollout/rewards": round(rng.normal(0, 1e-3), 6),
      "rollout/response_lengths": round(mean((x) => x.responseLength), 3),
      "rollout/truncated": round(mean((x) => (x.status === "truncated" ? 1 : 0)), 6),
      "rollout/turns": round(mean((x) => x.turnTokens.length), 4),
      "rollout/log_probs": round(mean((x) => x.rolloutLogProbs.reduce((a, b) => a + b, 0) / Math.max(1, x.rolloutLogProbs.length)), 6),
      "multi_turn/tool_calls_mean": round(mean((x) => x.toolSeconds.length), 4),
      "perf/rollout_time": round(rolloutTime, 4),
      "perf/train_time": round(trainTime, 4),
      "perf/actor_train_time": round(trainTime - 14.1, 4),
      "perf/log_probs_time": round(6.2 + rng.normal(0, 0.2), 4),
      "perf/ref_log_probs_time": round(6.0 + rng.normal(0, 0.2), 4),
      "perf/data_preprocess_time": round(1.9 + rng.normal(0, 0.15), 4),
      "perf/update_weights_time": prev ? round(prev.uwEnd - prev.uwStart, 4) : pyFloat(0),
      "perf/train_wait_time": round(waitTime, 4),
      "perf/step_time": round(stepTime, 4),
      "perf/wait_time_ratio": round(waitTime / stepTime, 6),
      "perf/actor_train_mfu": mfu,
      "perf/mfu_peak_tflops": pyFloat(989),
      "perf/actor_train_tflops": round(mfu * 989, 3),
      "rollout/step": s.rolloutId,
    },
  });
  return out;
}

// ---------------------------------------------------------------------------------
// dumps

export async function writeQwenDumps(runDir: string, plan: QwenPlan, nowS: number, seed: number): Promise<void> {
  const base = Math.floor(nowS - plan.end) + 0.25;
  const rng = new Rng(seed).fork("dumps");
  plan.tokenizer.writeTo(path.join(runDir, "tokenizer"));
  for (const s of plan.steps) {
    if (s.rolloutId >= STEPS) continue;
    await writeRolloutDump({
      runDir,
      rolloutId: s.rolloutId,
      evaluation: false,
      samples: s.samples,
      writtenAt: base + s.r1 + 0.1,
      mirror: true,
      sidecar: true,
      metadata: { rollout_id: s.rolloutId },
    });
    await writeTrainDumps(rng.fork(`train${s.rolloutId}`), {
      runDir,
      rolloutId: s.rolloutId,
      samples: s.samples,
      layout: { dp: QWEN_TRAIN_RANKS / TP, tp: TP },
      writtenAt: base + s.trainStart + 1.3,
    });
  }
  if (plan.evalRollout) {
    await writeRolloutDump({
      runDir,
      rolloutId: EVAL_AFTER_STEP,
      evaluation: true,
      samples: plan.evalRollout.samples,
      writtenAt: base + plan.evalRollout.t1 + 0.1,
      mirror: true,
      sidecar: true,
    });
  }
}

export async function writeQwenRun(root: string, nowS: number, seed: number): Promise<string> {
  const runDir = path.join(root, QWEN_RUN);
  const plan = planQwen(seed);
  await writeQwenDumps(runDir, plan, nowS, seed);
  await writeQwenTelemetry(runDir, plan, nowS, seed);
  return runDir;
}
