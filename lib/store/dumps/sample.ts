/**
 * Rollout dump → SampleRecord (docs/api.md 1.3). Only the fields the read side uses are
 * kept; unknown keys are ignored. `status` is required (a sample without it is a 404,
 * like the reference's KeyError).
 */
import { notFound } from "@/lib/contracts/errors";
import { pyGet, pyHas, pyInt, pyNumber } from "./pyobj";
import type { NumArray, SampleRecord } from "./types";

function numList(v: unknown): NumArray | null {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map((x) => pyNumber(x) ?? NaN);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return v as unknown as NumArray;
  return null;
}

/** Pre-resolved numeric lists (tensor / ndarray values materialised by the caller). */
export interface SampleLists {
  tokens: NumArray | null;
  lossMask: NumArray | null;
  rolloutLogProbs: NumArray | null;
}

/** Metadata keys naming the serving engine, first present wins (drift by engine). */
const ENGINE_KEYS = ["engine", "engine_addr", "engine_url", "worker_addr", "server_url"] as const;

function engineOf(meta: unknown): string | null {
  if (meta === null || meta === undefined) return null;
  for (const k of ENGINE_KEYS) {
    const v = pyGet(meta, k);
    if (typeof v === "string" && v !== "") return v;
    if (typeof v === "number" || typeof v === "bigint") return String(v);
  }
  return null;
}

export function parseSample(raw: unknown, where: string, lists?: SampleLists): SampleRecord {
  if (!pyHas(raw, "status")) throw notFound(`'status' missing from a sample of ${where}`);
  const status = pyGet(raw, "status");
  const spec = pyGet(raw, "spec_info");
  const prefix = pyGet(raw, "prefix_cache_info");
  const versions = pyGet(raw, "weight_versions");
  const response = pyGet(raw, "response");
  return {
    index: pyInt(pyGet(raw, "index")),
    groupIndex: pyInt(pyGet(raw, "group_index")),
    prompt: pyGet(raw, "prompt") ?? null,
    tokens: (lists ? lists.tokens : numList(pyGet(raw, "tokens"))) ?? [],
    responseLength: pyInt(pyGet(raw, "response_length")) ?? 0,
    reward: pyGet(raw, "reward") ?? null,
    lossMask: lists ? lists.lossMask : numList(pyGet(raw, "loss_mask")),
    weightVersions: Array.isArray(versions) ? versions.map((v) => String(v)) : [],
    rolloutLogProbs: lists ? lists.rolloutLogProbs : numList(pyGet(raw, "rollout_log_probs")),
    removeSample: pyGet(raw, "remove_sample") === true,
    status: typeof status === "string" ? status : String(pyGet(status, "_value_") ?? status),
    nonGenerationTime: pyNumber(pyGet(raw, "non_generation_time")) ?? 0,
    specAcceptTokenNum: pyNumber(pyGet(spec, "spec_accept_token_num")) ?? 0,
    specDraftTokenNum: pyNumber(pyGet(spec, "spec_draft_token_num")) ?? 0,
    cachedTokens: pyNumber(pyGet(prefix, "cached_tokens")) ?? 0,
    totalPromptTokens: pyNumber(pyGet(prefix, "total_prompt_tokens")) ?? 0,
    engine: engineOf(pyGet(raw, "metadata")),
    response: typeof response === "string" ? response : null,
  };
}
