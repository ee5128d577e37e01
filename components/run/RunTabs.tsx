"use client";

import { Link } from "@/components/shell/Link";
import { usePathname } from "next/navigation";

export function RunTabs({ base, hasTimeline, hasDumps }: { base: string; hasTimeline: boolean; hasDumps: boolean }) {
  const path = usePathname();
  const tab = (href: string, label: string, enabled: boolean, why: string) =>
    enabled ? (
      <Link href={href} className="run-tab" aria-current={path.startsWith(href) ? "page" : undefined}>
        {label}
      </Link>
    ) : (
      <span className="run-tab run-tab-off" title={why} aria-disabled="true">
        {label}
      </span>
    );
  return (
    <nav className="run-tabs" aria-label="Run views">
      {tab(`${base}/metrics`, "Metrics", true, "")}
      {tab(`${base}/timeline`, "Compute Utilization", hasTimeline, "no telemetry (phases / gpu_util) was recorded for this run")}
      {tab(`${base}/rollout`, "Rollouts", hasDumps, "no rollout dumps (rollout_data/*.pt) in this run")}
    </nav>
  );
}
