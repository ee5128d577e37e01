/** Span colours of the trace views, by span kind (one table for the Sample and Step views). */
import type { SPAN_KINDS } from "@/lib/contracts/traces";

export const KIND_COLOR: Record<(typeof SPAN_KINDS)[number], string> = {
  group: "#b9b2a6",
  sample: "#8f9bb3",
  generate: "#c8541c",
  reward: "#2f8f4e",
  tool: "#7c5cc4",
  pd_prefill: "#2563eb",
  pd_decode: "#b7791f",
  other: "#6d665c",
};

/** Distinct shades for the PD segments of a lane (by position), so adjacent parts differ. */
export const SEGMENT_SHADES: Record<"P" | "D", readonly string[]> = {
  P: ["#1e40af", "#2563eb", "#60a5fa", "#1d4ed8", "#93c5fd"],
  D: ["#92400e", "#b7791f", "#d69e2e", "#f6ad55", "#7b341e"],
};
