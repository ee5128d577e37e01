/**
 * Live mode for `npm run demo`: keeps the `qwen3-4b-grpo-demo` run growing in real time,
 * through RunWriter like a collector would, so the dashboard's follow mode has something
 * to follow. A compressed step (~20 s) is scheduled ahead of the wall clock: rollout on
 * the engines (its OPEN marker is on disk while it runs, the closing record lands when it
 * ends), then the train ranks' phases, weight sync, metrics for both step keys; GPU
 * samples at 1 Hz, engine scrapes every 2 s, a data-buffer line per step — and, like the
 * rollout manager, each finished rollout's dump files (`rollout_data/{rolloutId}.pt` through the
 * project's .pt writer, its parquet mirror and trajectory sidecar, the `train_data/`
 * shards) plus the samples' lifecycle events, so every view of the run moves.
 *
 * The engine scraper is armed by a topology snapshot (what a restarted collector writes
 * first, docs/formats.md §4.6): the writer re-announces the last topology on disk.
 *
 * Continuity with what is already on disk: step numbers continue after the last logged
 * ones, engine counters continue from their last scraped values, and OPEN markers left by
 * the history (the in-flight rollout, each rank's `train_wait`) are closed by this writer
 * — the rollout right away, `train_wait` when the first live train call starts.
 * `stop()` flushes and closes whatever is open at that instant, so nothing dangles.
 */
import path from "node:path";
import { openMetricStore } from "@/lib/store/telemetry";
import { OPEN_T1 } from "@/lib/store/telemetry";
import type { TopologySnapshot, TrajectoryEvent } from "@/lib/store/format";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { pyFloat } from "@/lib/store/format";
import { engineSeries } from "@/lib/timeline/engine";
import { phaseSource } from "@/lib/timeline/phases";
import { SimEmitter, type SimPhase } from "./cluster";
import { agenticSample, sampleEvent, writeRolloutDump, writeTrainDumps, type DemoSample } from "./dumps";
import { Rng, round } from "./prng";
import { QWEN_ENGINES, QWEN_METRICS, QWEN_NODE, QWEN_TRAIN_RANKS, TRAIN_ACTIVITY, qwenArgs, qwenCluster, qwenTopologyEngines, trainLane } from "./qwen";
import { corpusWords, makeConversation } from "./text";
import { DemoTokenizer } from "./tokenizer";

export interface LiveWriterOptions {
  /** How often new telemetry is appended (s). */
  intervalS?: number;
  /** Length of one simulated step (s). */
  stepS?: number;
  /** Wall clock in unix seconds (tests). */
  now?: () => number;
  seed?: number;
  /** Write each finished rollout's dump files (default true). */
  dumps?: boolean;
  onError?: (err: unknown) => void;
}

export interface LiveWriterHandle {
  /** Steps scheduled so far (the first one is `firstStep`). */
  readonly firstStep: number;
  /** Stop appending; flushes and closes open phases. Idempotent. */
  stop(): Promise<void>;
  /** Append everything due now (what the timer does every `intervalS`). */
  tick(): Promise<void>;
  /** Rollout ids whose dump files this writer has written so far. */
  readonly dumped: readonly number[];
}

interface Resume {
  rolloutStep: number;
  trainStep: number;
  open: SimPhase[];
  counters: Map<string, Map<string, number>>;
  topology: TopologySnapshot | null;
}

async function resumeState(runDir: string): Promise<Resume> {
  const store = openMetricStore(runDir, { follow: false });
  let rolloutStep = -1;
  let trainStep = -1;
  for (const r of await store.metrics()) {
    if (r.step === null) continue;
    if (r.step_key === "rollout/step") rolloutStep = Math.max(rolloutStep, r.step);
    if (r.step_key === "train/step") trainStep = Math.max(trainStep, r.step);
  }
  const src = await phaseSource(store, null);
  const open: SimPhase[] = [];
  src.blocks.forEach((b, i) => {
    for (const j of src.unmatched[i] ?? []) {
      const ev = b.rows[j]!;
      if (ev.t1 !== OPEN_T1) continue;
      open.push({ name: ev.name, t0: ev.t0, t1: null, node: ev.node, gpus: [...ev.gpus], rank: ev.rank, role: ev.role === "train" ? "train" : "rollout_manager" });
    }
  });
  const counters = new Map<string, Map<string, number>>();
  const range = await store.timeRange();
  if (range) {
    for (const metric of QWEN_METRICS.filter((m) => /_(total|sum|count)$/.test(m))) {
      for (const s of await engineSeries(store, metric, range[1] - 3600, range[1], 2000, true)) {
        const last = s.value[s.value.length - 1];
        if (last === undefined) continue;
        const key = `${s.addr}|${s.labels.dp_rank ?? "0"}`;
        let m = counters.get(key);
        if (!m) counters.set(key, (m = new Map<string, number>()));
        m.set(metric, Number(last));
      }
    }
  }
  const topo = await store.topology();
  return { rolloutStep, trainStep, open, counters, topology: topo[topo.length - 1] ?? null };
}

export async function startDemoLiveWriter(runDir: string, opts: LiveWriterOptions = {}): Promise<LiveWriterHandle> {
  const intervalS = opts.intervalS ?? 2;
  const stepS = opts.stepS ?? 20;
  const now = opts.now ?? (() => Date.now() / 1000);
  const resume = await resumeState(runDir);
  const writer = await RunWriter.open({ dashDir: path.join(runDir, "dashboard") });
  const t0 = now();
  const rng = new Rng(opts.seed ?? Math.floor(t0)).fork("live");
  const spec = qwenCluster();
  const em = new SimEmitter(writer, spec, { gpuStart: Math.ceil(t0), origin: t0, rng: rng.fork("emit") });
  // Arm the engine scraper: without a topology snapshot the emitter scrapes nothing.
  em.addTopology({
    ...(resume.topology ?? { engines: qwenTopologyEngines(rng) }),
    ts: round(t0 + 0.2, 3),
  });
  QWEN_ENGINES.forEach((e, ei) => {
    for (let dp = 0; dp < 2; dp++) {
      const c = resume.counters.get(`${e.addr}|${dp}`);
      if (c) em.seedCounters(ei, dp, c);
    }
  });

  // Close the history's open phases: the in-flight rollout ends now; train_wait ends
  // when the first live train call starts (below); anything else ends now.
  const waitSince = new Map<number, number>();
  for (const p of resume.open) {
    if (p.role === "train" && p.name === "train_wait" && p.rank >= 0) waitSince.set(p.rank, p.t0);
    else em.addPhase({ ...p, t1: Math.max(p.t0, round(t0 + 0.8, 3)) });
  }
  for (let rank = 0; rank < QWEN_TRAIN_RANKS; rank++) if (!waitSince.has(rank)) waitSince.set(rank, round(t0, 3));

  let nextStepAt = t0 + 1;
  let step = resume.rolloutStep + 1;
  let trainStep = resume.trainStep + 1;
  const firstStep = step;
  const at = (x: number) => round(x, 3);
  const rm = (name: string, a: number, b: number): SimPhase => ({ name, t0: at(a), t1: at(b), node: QWEN_NODE, gpus: [], rank: -1, role: "rollout_manager" });

  const writeDumps = opts.dumps ?? true;
  const pendingDumps: { rolloutId: number; at: number; trainAt: number; samples: DemoSample[] }[] = [];
  const dumped: number[] = [];
  const tok = new DemoTokenizer(corpusWords());
  const maxResponse = Number(qwenArgs().rollout_max_response_len);
  const nPerPrompt = Number(qwenArgs().n_samples_per_prompt);
  const groups = Number(qwenArgs().rollout_batch_size);
  // Live samples get indices after the history's (rolloutId-major, so they never collide).
  const indexBase = (rolloutId: number) => (rolloutId + 1) * 1000;

  /** One step's samples: `groups` prompts × `nPerPrompt`, the Qwen demo's agentic mix. */
  const liveSamples = (r: Rng, rolloutId: number, version: string): DemoSample[] => {
    const out: DemoSample[] = [];
    const pCorrect = Math.min(0.85, 0.66 + 0.004 * (rolloutId - firstStep));
    for (let g = 0; g < groups; g++) {
      const family = r.pick(["math", "math", "search", "code"]);
      for (let j = 0; j < nPerPrompt; j++) {
        const conv = makeConversation(r.fork(`c${g}.${j}`), { pCorrect, family });
        out.push(
          agenticSample(r.fork(`s${g}.${j}`), tok, conv, {
            index: indexBase(rolloutId) + g * nPerPrompt + j,
            groupIndex: indexBase(rolloutId) + g,
            maxResponseLen: maxResponse,
            versionOfTurn: () => version,
          }),
        );
      }
    }
    return out;
  };

  /**
   * A sample's turns as engine requests inside the compressed rollout [r0, r1] (time scaled
   * so the slowest sample ends the rollout), with its lifecycle events (docs/formats.md §4.8).
   */
  const feedSample = (r: Rng, smp: DemoSample, i: number, r0: number, r1: number, version: string) => {
    const engine = i % 2;
    const dp = Math.floor(i / 2) % 2;
    const start = r0 + r.float(0.02, 0.4);
    const end = Math.max(start + 0.5, r1 - 0.2 - r.exp((r1 - r0) / 6));
    const turns = Math.max(1, smp.turnTokens.length);
    const slice = (end - start) / turns;
    const ev = (ts: number, kind: TrajectoryEvent["kind"], turn: number, detail = "") => sampleEvent(smp, at(ts), kind, turn, version, detail);
    const events: TrajectoryEvent[] = [ev(start, "attempt_start", -1), ev(start + 0.01, "gen_start", -1)];
    let prompt = smp.tokens.length - smp.responseLength;
    for (let k = 0; k < turns; k++) {
      const q0 = start + 0.02 + k * slice;
      const gen1 = q0 + slice * (smp.toolSeconds[k] !== undefined ? 0.7 : 0.95);
      const tokens = smp.turnTokens[k] ?? 0;
      em.addRequest({ engine, dp, q0, t0: q0 + 0.03, t1: gen1, promptTokens: prompt, completionTokens: tokens, ttft: 0.07, aborted: false });
      events.push(ev(q0 + 0.03, "gen_start", k + 1), ev(gen1, "gen_end", k + 1, String(tokens)));
      if (smp.toolSeconds[k] !== undefined) events.push(ev(gen1, "tool_start", k + 1, "1 calls"), ev(q0 + slice - 0.01, "tool_end", k + 1, "1 calls"));
      prompt += tokens + 60;
    }
    events.push(ev(end, "attempt_end", -1, smp.status));
    for (const e of events) em.addTrajectory(e, e.ts + 0.5);
  };

  /** Dump files of the rollouts that have ended by `t` (the rollout manager writes them then). */
  const flushDumps = async (t: number) => {
    while (pendingDumps.length && pendingDumps[0]!.trainAt <= t) {
      const d = pendingDumps.shift()!;
      await writeRolloutDump({ runDir, rolloutId: d.rolloutId, evaluation: false, samples: d.samples, writtenAt: d.at, mirror: true, sidecar: true, metadata: { rollout_id: d.rolloutId } });
      await writeTrainDumps(rng.fork(`train${d.rolloutId}`), { runDir, rolloutId: d.rolloutId, samples: d.samples, layout: { dp: QWEN_TRAIN_RANKS / 2, tp: 2 }, writtenAt: d.trainAt });
      dumped.push(d.rolloutId);
    }
  };

  /** One compressed step from `r0`; returns when the next one starts. */
  const scheduleStep = (r0: number): number => {
    const s = rng.fork(`step${step}`);
    const rolloutS = stepS * s.float(0.5, 0.6);
    const r1 = r0 + rolloutS;
    em.addPhase(rm("rollout", r0, r1));
    const version = String(Math.max(0, step - 1));
    const samples = liveSamples(s.fork("samples"), step, version);
    samples.forEach((smp, i) => feedSample(s.fork(`t${i}`), smp, i, r0, r1, version));
    if (writeDumps) pendingDumps.push({ rolloutId: step, at: r1 + 0.1, trainAt: r1 + 1.3, samples });
    em.addDataBuffer({ ts: at(r1 + 0.05), length: s.int(1, 2) });
    const train0 = r1 + 0.3;
    const dp1 = train0 + stepS * 0.04;
    const lp1 = dp1 + stepS * 0.08;
    const ref1 = lp1 + stepS * 0.08;
    const train1 = ref1 + stepS * 0.17;
    const uw1 = train1 + stepS * 0.07;
    for (let rank = 0; rank < QWEN_TRAIN_RANKS; rank++) {
      const add = (name: string, a: number, b: number) => {
        em.addPhase({ name, t0: at(a), t1: at(b), node: QWEN_NODE, gpus: [rank], rank, role: "train" });
        const act = TRAIN_ACTIVITY[name];
        if (act) em.addActivity(trainLane(rank), { t0: a, t1: b, utilLo: act[0], utilHi: act[1], memMb: act[2] });
      };
      add("train_wait", waitSince.get(rank)!, train0 - 0.02);
      add("data_preprocess", train0, dp1);
      add("train", dp1, train1);
      add("log_probs", dp1 + 0.03, lp1);
      add("ref_log_probs", lp1 + 0.02, ref1);
      add("actor_train", ref1 + 0.03, train1 - 0.05);
      add("update_weights", train1 + 0.05, uw1);
      add("update_weights_implementation", train1 + 0.12, uw1 - 0.06);
      waitSince.set(rank, train1 + 0.01);
    }
    em.addEngineUpdate(train1 + 0.12, uw1 - 0.06);
    const m = rng.fork(`m${step}`);
    for (let k = 0; k < 2; k++) {
      em.addMetrics({
        ts: at(ref1 + ((train1 - ref1) * (k + 1)) / 2),
        step_key: "train/step",
        step: trainStep,
        metrics: {
          "train/loss": round(0.006 + m.normal(0, 0.003), 6),
          "train/pg_loss": round(m.normal(0.003, 0.005), 6),
          "train/pg_clipfrac": round(Math.max(0, m.normal(0.002, 0.0005)), 6),
          "train/grad_norm": round(0.2 + m.exp(0.06), 5),
          "train/lr-pg": 1e-6,
          "train/step": trainStep,
        },
      });
      trainStep++;
    }
    const period = uw1 + 0.2 - r0;
    const wait = train0 - r0;
    em.addMetrics({
      ts: at(uw1 + 0.1),
      step_key: "rollout/step",
      step,
      metrics: {
        "rollout/raw_reward": samples.length
          ? round(samples.reduce((a, x) => a + x.reward, 0) / samples.length, 6)
          : round(Math.min(0.95, 0.66 + 0.004 * (step - firstStep) + m.normal(0, 0.04)), 6),
        "rollout/response_lengths": samples.length
          ? round(samples.reduce((a, x) => a + x.responseLength, 0) / samples.length, 3)
          : round(230 + m.normal(0, 15), 3),
        "perf/rollout_time": round(rolloutS, 4),
        "perf/train_time": round(train1 - dp1, 4),
        "perf/step_time": round(period, 4),
        "perf/wait_time_ratio": round(wait / period, 6),
        "perf/actor_train_mfu": round(0.3 + m.normal(0, 0.01), 4),
        "perf/mfu_peak_tflops": pyFloat(989),
        "rollout/step": step,
      },
    });
    step++;
    return uw1 + 0.2;
  };

  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  const tick = (): Promise<void> => {
    const run = chain.then(async () => {
      if (stopped) return;
      const t = now();
      while (nextStepAt < t + 3 * stepS) nextStepAt = scheduleStep(nextStepAt);
      em.emitUntil(t);
      await writer.flush();
      await flushDumps(t);
    });
    chain = run.catch((err: unknown) => opts.onError?.(err));
    return run;
  };
  await tick();
  const timer = setInterval(() => void tick(), intervalS * 1000);
  timer.unref?.();
  return {
    firstStep,
    dumped,
    tick,
    async stop() {
      if (stopped) return;
      clearInterval(timer);
      await chain;
      stopped = true;
      em.finish(now());
      await writer.close(); // with the phase hour index (docs/formats.md §4.16)
    },
  };
}
