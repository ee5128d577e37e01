"use client";
/**
 * The "Links" line of the step and sample views (docs/views.md 4.7, 6.5). Its content is
 * rendered once the browser is first idle (lib/client/idle.ts): the links' own requests
 * (meta, step timing, the trace) wait for the view's, and the line keeps its place meanwhile.
 */
import type { ReactNode } from "react";
import { useAfterFirstIdle } from "@/lib/client/idle";
import "./links.css";

export function LinksLine({ label, children }: { label: string; children: () => ReactNode }) {
  const idle = useAfterFirstIdle();
  return (
    <nav className="vl-links" aria-label={label}>
      <span className="muted">Links</span>
      {idle ? children() : <span className="vl-note">…</span>}
    </nav>
  );
}
