/**
 * Parts of the report inlined in the page as their own JSON blocks, parsed by the viewer
 * only when first read (docs/export.md "The HTML file"): the phases of 64 lanes × 8 h are
 * most of the bytes, and the page is interactive before they are parsed.
 */
export const LAZY_PARTS = ["phases", "utilization", "rollout", "samples"] as const;
export type LazyPart = (typeof LAZY_PARTS)[number];

/**
 * What the page needs at load about the lazy parts (header facts, which tabs exist), so
 * opening it parses none of them. Written by lib/export/html.ts as `id="report-index"`.
 */
export interface PartsIndex {
  utilization: { kind: "lanes" | "fleet"; lanes: number; nodes: number | null; engines: number | null } | null;
  rollout_steps: string[];
  sample_steps: string[];
}
