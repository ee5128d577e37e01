"use client";
/**
 * The Rollouts view's secondary tabs, loaded when their tab opens (next/dynamic): the step's
 * first load carries the Samples tab only. Each placeholder is the tab panel itself, at the
 * height the panel first draws at (measured in Chromium: Drift 78 px before its answer,
 * Search 84 px without a query), so the code arriving does not make the page jump.
 * Client-only (`ssr: false`): a server-rendered form would take typing before its code
 * arrived, and hydration would then drop what was typed (a deep link to `?tab=search`).
 */
import dynamic from "next/dynamic";

function Placeholder({ label, height }: { label: string; height: number }) {
  return (
    <div role="tabpanel" aria-label={label} data-state="loading">
      <section className="rv-panel rv-placeholder" aria-busy="true" style={{ minHeight: height }}>
        <h2 className="rv-panel-title">{label} — loading…</h2>
      </section>
    </div>
  );
}

export const DriftPanel = dynamic(() => import("./drift/DriftPanel").then((m) => m.DriftPanel), {
  ssr: false,
  loading: () => <Placeholder label="Drift" height={78} />,
});

export const RolloutSearch = dynamic(() => import("./search/RolloutSearch").then((m) => m.RolloutSearch), {
  ssr: false,
  loading: () => <Placeholder label="Search" height={84} />,
});
