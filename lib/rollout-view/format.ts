/**
 * What the rollout views print beyond the shared formatters (lib/charts/core/format.ts,
 * docs/views.md 1.8): the weight-version span of a sample.
 */
import type { Cell } from "./types";

/** Client-computed weight-version span: `v<lo>–v<hi>` when mixed, `v<hi>`, or null. */
export function formatVersions(row: { readonly [column: string]: Cell | undefined }): string | null {
  const hi = row.weight_version;
  if (hi === null || hi === undefined || hi === "") return null;
  const lo = row.weight_version_min;
  if (row.mixed_version === true && lo !== null && lo !== undefined && String(lo) !== String(hi)) return `v${String(lo)}–v${String(hi)}`;
  return `v${String(hi)}`;
}
