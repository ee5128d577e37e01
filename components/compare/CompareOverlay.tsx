"use client";

import type { GetCompareResponse } from "@/lib/contracts/compare";

/** Placeholder until the overlay charts land (see docs/views.md "Compare"). */
export function CompareOverlay({ report }: { report: GetCompareResponse; live: boolean }) {
  return <p className="muted">Overlay of {report.runs.length} runs.</p>;
}
