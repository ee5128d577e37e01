/**
 * Dump-side files of a demo run, in the layout the training code leaves (docs/api.md 1.1–1.7):
 * `rollout_data/{rolloutId}.pt` / `eval_{rolloutId}.pt` (torch pickles via lib/store/pt/write),
 * `train_data/{rolloutId}_{rank}.pt` for every rank (TP peers write identical shards),
 * `dashboard_columns/rollout_{stem}.parquet` (the six-column mirror, written by the
 * reader's own `writeMirror` so both sides agree on the schema) and
 * `trajectory/{stem}.jsonl` (compact, ASCII-escaped Python JSON via lib/store/writer).
 *
 * Samples are built here too: token ids come from the demo tokenizer, so the token view
 * decodes them to the conversation text. File mtimes are set to the simulated write time
 * (a fresh rollout file without a train companion would be hidden for 10 s otherwise).
 */
import fs from "node:fs";
import path from "node:path";
import { writeMirror, type MirrorRow } from "@/lib/store/dumps/mirror";
import { dumpPy, pyFloat as jsonFloat, type PyValue } from "@/lib/store/format";
import { ptBytes, pyFloat, tensorOf, type TensorSpec } from "@/lib/store/pt/write";
import { clamp, type Rng } from "./prng";
import { renderPrompt, renderResponse, toMessages, toPromptMessages, type Conversation } from "./text";
import type { DemoTokenizer } from "./tokenizer";
import type { TrajectoryEvent } from "@/lib/store/format";

export type SampleStatus = "completed" | "truncated" | "aborted" | "failed";

export interface DemoSample {
  index: number;
  groupIndex: number;
  /** The raw prompt: a string, or the chat so far (tool results included). */
  prompt: string | Record<string, unknown>[];
  tokens: number[];
  responseLength: number;
  /** Rollout-side mask, one entry per response token (null = none recorded). */
  lossMask: number[] | null;
  rolloutLogProbs: number[];
  reward: number;
  status: SampleStatus;
  weightVersions: string[];
  /** Completion tokens per generation call (turn). */
  turnTokens: number[];
  /** Seconds spent outside generation (tool calls). */
  nonGenerationTime: number;
  toolSeconds: number[];
  cachedTokens: number;
  totalPromptTokens: number;
  specDraft: number;
  specAccept: number;
  specVerify: number;
  response: string;
  messages: Record<string, unknown>[] | null;
  family: string;
}

/** One lifecycle event of a sample (docs/formats.md §4.8). */
export function sampleEvent(
  s: Pick<DemoSample, "index" | "groupIndex">,
  ts: number,
  kind: TrajectoryEvent["kind"],
  turn: number,
  version: string,
  detail = "",
): TrajectoryEvent {
  return { ts, kind, sample_index: s.index, group_index: s.groupIndex, turn, weight_version: version, detail };
}

export interface SampleOptions {
  index: number;
  groupIndex: number;
  maxResponseLen: number;
  /** Weight version of each generation call; the sample records one entry per turn. */
  versionOfTurn: (turn: number) => string;
}

/** A multi-turn agentic sample rendered with the Qwen3 chat template. */
export function agenticSample(rng: Rng, tok: DemoTokenizer, conv: Conversation, o: SampleOptions): DemoSample {
  const promptIds = tok.encode(renderPrompt(conv));
  const respIds: number[] = [];
  const mask: number[] = [];
  const lps: number[] = [];
  const turnTokens: number[] = [];
  let responseText = "";
  let truncated = false;
  for (const seg of renderResponse(conv)) {
    let ids = tok.encode(seg.text);
    const room = o.maxResponseLen - respIds.length;
    if (ids.length > room) {
      responseText += seg.text.slice(0, Math.round((seg.text.length * room) / ids.length));
      ids = ids.slice(0, room);
      truncated = true;
    } else {
      responseText += seg.text;
    }
    for (const _ of ids) {
      mask.push(seg.trained ? 1 : 0);
      lps.push(seg.trained ? logProb(rng) : 0);
    }
    respIds.push(...ids);
    if (seg.trained) turnTokens[seg.turn - 1] = (turnTokens[seg.turn - 1] ?? 0) + ids.length;
    if (truncated) break;
  }
  const turns = turnTokens.length;
  const toolSeconds: number[] = [];
  for (let t = 0; t < turns; t++) {
    const results = conv.turns[t]?.toolResults.length ?? 0;
    if (results && !(truncated && t === turns - 1)) toolSeconds.push(conv.family === "code" ? rng.float(4, 16) : conv.family === "search" ? rng.float(1.2, 5) : rng.float(0.4, 2.5));
  }
  const completion = turnTokens.reduce((a, b) => a + b, 0);
  const verify = Math.max(1, Math.round(completion / rng.float(2.2, 3.1)));
  const status: SampleStatus = truncated ? "truncated" : "completed";
  return {
    index: o.index,
    groupIndex: o.groupIndex,
    prompt: toPromptMessages(conv),
    tokens: [...promptIds, ...respIds],
    responseLength: respIds.length,
    lossMask: mask,
    rolloutLogProbs: lps,
    reward: status === "completed" && conv.correct ? 1 : 0,
    status,
    weightVersions: Array.from({ length: turns }, (_, t) => o.versionOfTurn(t)),
    turnTokens,
    nonGenerationTime: toolSeconds.reduce((a, b) => a + b, 0),
    toolSeconds,
    // Later turns re-send the whole chat: the prefix cache serves all but the new tail.
    cachedTokens: Math.round(promptIds.length * (turns - 1) * 0.97 + rng.int(0, 64)),
    totalPromptTokens: promptIds.length * turns + Math.round(respIds.length * 0.6),
    specDraft: verify * 3,
    specAccept: Math.max(0, completion - verify),
    specVerify: verify,
    response: responseText,
    messages: truncated ? null : toMessages(conv),
    family: conv.family,
  };
}

/** A single-turn sample with a string prompt (plain GRPO on math word problems). */
export function plainSample(rng: Rng, tok: DemoTokenizer, conv: Conversation, o: SampleOptions): DemoSample {
  const last = conv.turns[conv.turns.length - 1]!;
  const prompt = `${conv.user}\nPlease reason step by step, and put your final answer on the last line.`;
  const promptIds = tok.encode(`<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`);
  const text = `<think>\n${conv.turns.map((t) => t.reasoning).join(" ")}\n</think>\n\n${last.content}<|im_end|>`;
  let ids = tok.encode(text);
  const truncated = ids.length > o.maxResponseLen;
  if (truncated) ids = ids.slice(0, o.maxResponseLen);
  return {
    index: o.index,
    groupIndex: o.groupIndex,
    prompt,
    tokens: [...promptIds, ...ids],
    responseLength: ids.length,
    lossMask: null,
    rolloutLogProbs: ids.map(() => logProb(rng)),
    reward: !truncated && conv.correct ? 1 : 0,
    status: truncated ? "truncated" : "completed",
    weightVersions: [o.versionOfTurn(0)],
    turnTokens: [ids.length],
    nonGenerationTime: 0,
    toolSeconds: [],
    cachedTokens: rng.int(0, promptIds.length),
    totalPromptTokens: promptIds.length,
    specDraft: 0,
    specAccept: 0,
    specVerify: 0,
    response: text,
    messages: null,
    family: conv.family,
  };
}

/** Engine log-prob of a sampled token: mostly confident, a heavy tail of surprising ones. */
function logProb(rng: Rng): number {
  const v = rng.chance(0.12) ? -rng.exp(2.2) : -rng.exp(0.08);
  return Math.fround(clamp(v, -18, -1e-6));
}

// ---------------------------------------------------------------------------------
// rollout dump

const f = (v: number) => (Number.isInteger(v) ? pyFloat(v) : v);

function sampleDict(s: DemoSample, rolloutId: number): Record<string, unknown> {
  return {
    group_index: s.groupIndex,
    index: s.index,
    rollout_id: rolloutId,
    prompt: s.prompt,
    tokens: s.tokens,
    multimodal_inputs: null,
    multimodal_train_inputs: null,
    response: s.response,
    response_length: s.responseLength,
    label: null,
    reward: pyFloat(s.reward),
    loss_mask: s.lossMask,
    weight_versions: s.weightVersions,
    rollout_log_probs: s.rolloutLogProbs.map(f),
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    remove_sample: false,
    teacher_log_probs: null,
    opd_reverse_kl: null,
    status: s.status,
    metadata: { task_family: s.family },
    generate_function_path: null,
    train_metadata: null,
    adapter: null,
    reward_spec: null,
    routing_key: null,
    non_generation_time: f(s.nonGenerationTime),
    spec_info: {
      spec_accept_token_num: s.specAccept,
      spec_draft_token_num: s.specDraft,
      spec_verify_ct: s.specVerify,
      completion_token_num: s.turnTokens.reduce((a, b) => a + b, 0),
    },
    prefix_cache_info: { cached_tokens: s.cachedTokens, total_prompt_tokens: s.totalPromptTokens },
  };
}

/** torch.save layout (archive prefix = file stem), assembled in memory and written in one call. */
function savePt(file: string, root: unknown): void {
  const prefix = path.basename(file).replace(/\.pt$/, "");
  fs.writeFileSync(file, ptBytes(root, { prefix }));
}

function setMtime(file: string, ts: number): void {
  const d = new Date(ts * 1000);
  fs.utimesSync(file, d, d);
}

export interface StepDumpOptions {
  runDir: string;
  rolloutId: number;
  evaluation: boolean;
  samples: readonly DemoSample[];
  /** Simulated time the rollout manager wrote the files. */
  writtenAt: number;
  /** Write the parquet mirror (older runs predate it; the reader rebuilds it). */
  mirror: boolean;
  /** Write the trajectory sidecar for samples with messages. */
  sidecar: boolean;
  metadata?: Record<string, unknown>;
}

const stemOf = (rolloutId: number, evaluation: boolean) => (evaluation ? `eval_${rolloutId}` : String(rolloutId));

/** Sidecar, mirror, then the `.pt` — the order the rollout manager writes them. */
export async function writeRolloutDump(o: StepDumpOptions): Promise<void> {
  const stem = stemOf(o.rolloutId, o.evaluation);
  if (o.sidecar && o.samples.some((s) => s.messages)) {
    const file = path.join(o.runDir, "trajectory", `${stem}.jsonl`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const lines = o.samples
      .filter((s) => s.messages)
      .map((s) =>
        dumpPy({
          sample_index: s.index,
          group_index: s.groupIndex,
          status: s.status,
          reward: jsonFloat(s.reward),
          prompt: s.prompt as PyValue,
          messages: s.messages as PyValue,
        }),
      );
    fs.writeFileSync(file, lines.join("\n") + "\n");
    setMtime(file, o.writtenAt - 0.4);
  }
  if (o.mirror) {
    const file = path.join(o.runDir, "dashboard_columns", `rollout_${stem}.parquet`);
    const rows: MirrorRow[] = o.samples.map((s) => ({
      sample_index: s.index,
      response_length: s.responseLength,
      total_length: s.tokens.length,
      tokens: s.tokens,
      loss_mask: s.lossMask,
      rollout_log_probs: s.rolloutLogProbs,
    }));
    await writeMirror(file, rows, ["created_by", "rlboard demo generator"]);
    setMtime(file, o.writtenAt - 0.2);
  }
  const file = path.join(o.runDir, "rollout_data", `${stem}.pt`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  savePt(file, {
    rollout_id: o.rolloutId,
    metadata: o.metadata ?? {},
    samples: o.samples.map((s) => sampleDict(s, o.rolloutId)),
  });
  setMtime(file, o.writtenAt);
}

// ---------------------------------------------------------------------------------
// train dumps

export interface TrainLayout {
  /** Data-parallel shards; each is written by `tp` consecutive ranks. */
  dp: number;
  tp: number;
}

/** Balanced split by token count (what the trainer's seqlen balancing does), rows kept in index order. */
export function partitionShards(samples: readonly DemoSample[], dp: number): DemoSample[][] {
  const shards: DemoSample[][] = Array.from({ length: dp }, () => []);
  const load = new Array<number>(dp).fill(0);
  const bySize = [...samples].sort((a, b) => b.tokens.length - a.tokens.length || a.index - b.index);
  for (const s of bySize) {
    let best = 0;
    for (let k = 1; k < dp; k++) if (load[k]! < load[best]!) best = k;
    shards[best]!.push(s);
    load[best]! += s.tokens.length;
  }
  for (const sh of shards) sh.sort((a, b) => a.index - b.index);
  return shards;
}

/** GRPO/GSPO group normalisation: (r − mean) / (std + 1e-6) within each group. */
export function normalizedRewards(samples: readonly DemoSample[]): Map<number, number> {
  const groups = new Map<number, number[]>();
  for (const s of samples) {
    const g = groups.get(s.groupIndex) ?? [];
    g.push(s.reward);
    groups.set(s.groupIndex, g);
  }
  const out = new Map<number, number>();
  for (const s of samples) {
    const g = groups.get(s.groupIndex)!;
    const mean = g.reduce((a, b) => a + b, 0) / g.length;
    const std = Math.sqrt(g.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, g.length - 1));
    out.set(s.index, Math.fround((s.reward - mean) / (std + 1e-6)));
  }
  return out;
}

interface TrainTensors {
  tokens: TensorSpec;
  lossMask: TensorSpec;
  perToken: Record<"log_probs" | "rollout_log_probs" | "ref_log_probs" | "entropy" | "advantages" | "returns", TensorSpec>;
}

/** Actor-side per-token values: close to the engine's log-probs, further apart when stale. */
function trainTensors(rng: Rng, s: DemoSample, adv: number, staleness: number): TrainTensors {
  const n = s.responseLength;
  const mask = s.lossMask ?? new Array<number>(n).fill(1);
  const lp = new Float32Array(n);
  const ref = new Float32Array(n);
  const ent = new Float32Array(n);
  const rlp = new Float32Array(n);
  const drift = 0.006 + 0.012 * staleness;
  for (let i = 0; i < n; i++) {
    const r = s.rolloutLogProbs[i] ?? 0;
    rlp[i] = r;
    const base = mask[i] ? r : -rng.exp(1.5);
    lp[i] = Math.min(-1e-7, base + rng.normal(0, drift) * (1 + Math.abs(base)));
    ref[i] = Math.min(-1e-7, lp[i]! + rng.normal(0, 0.03));
    ent[i] = Math.max(0, -0.9 * lp[i]! + Math.abs(rng.normal(0, 0.15)));
  }
  return {
    tokens: tensorOf("i64", s.tokens),
    lossMask: tensorOf("i32", mask),
    perToken: {
      log_probs: tensorOf("f32", lp),
      rollout_log_probs: tensorOf("f32", rlp),
      ref_log_probs: tensorOf("f32", ref),
      entropy: tensorOf("f32", ent),
      advantages: tensorOf("f32", new Float32Array(n).fill(adv)),
      returns: tensorOf("f32", new Float32Array(n).fill(adv)),
    },
  };
}

/** `train_data/{rolloutId}_{rank}.pt` for every rank; TP peers share the shard (identical files). */
export async function writeTrainDumps(
  rng: Rng,
  o: { runDir: string; rolloutId: number; samples: readonly DemoSample[]; layout: TrainLayout; writtenAt: number },
): Promise<void> {
  const dir = path.join(o.runDir, "train_data");
  fs.mkdirSync(dir, { recursive: true });
  const norm = normalizedRewards(o.samples);
  const rawReward = o.samples.map((s) => pyFloat(s.reward));
  const shards = partitionShards(o.samples, o.layout.dp);
  for (let d = 0; d < shards.length; d++) {
    const shard = shards[d]!;
    const tensors = shard.map((s) => {
      const vmin = Math.min(...s.weightVersions.map(Number).filter(Number.isFinite));
      return trainTensors(rng.fork(`t${s.index}`), s, norm.get(s.index)!, Number.isFinite(vmin) ? Math.max(0, o.rolloutId - vmin) : 0);
    });
    const per = (k: keyof TrainTensors["perToken"]) => tensors.map((t) => t.perToken[k]);
    const rolloutData = {
      tokens: tensors.map((t) => t.tokens),
      response_lengths: shard.map((s) => s.responseLength),
      rewards: shard.map((s) => f(norm.get(s.index)!)),
      truncated: shard.map((s) => (s.status === "truncated" ? 1 : 0)),
      loss_masks: tensors.map((t) => t.lossMask),
      sample_indices: shard.map((s) => s.index),
      rollout_mask_sums: shard.map((s) => (s.lossMask ?? []).reduce((a, b) => a + b, 0) || s.responseLength),
      rollout_log_probs: per("rollout_log_probs"),
      weight_versions: shard.map((s) => s.weightVersions),
      raw_reward: rawReward,
      total_lengths: shard.map((s) => s.tokens.length),
      log_probs: per("log_probs"),
      ref_log_probs: per("ref_log_probs"),
      advantages: per("advantages"),
      returns: per("returns"),
      entropy: per("entropy"),
    };
    for (let t = 0; t < o.layout.tp; t++) {
      const rank = d * o.layout.tp + t;
      const file = path.join(dir, `${o.rolloutId}_${rank}.pt`);
      savePt(file, { rollout_id: o.rolloutId, rank, rollout_data: rolloutData, cp_rank: 0, cp_size: 1, qkv_format: "thd" });
      setMtime(file, o.writtenAt + 0.05 * rank);
    }
  }
}
