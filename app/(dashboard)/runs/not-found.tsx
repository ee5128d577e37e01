import type { Metadata } from "next";
import { RunNotFound } from "@/components/shell/RunNotFound";
import "@/app/rollout-views.css";

// An unknown run id (notFound() in the run layout, lib/server/runs/page-run.ts): the app
// shell's page, still answered with status 404 (#15 defect 11).
export const metadata: Metadata = { title: "Run not found" };

export default function RunsNotFound() {
  return <RunNotFound />;
}
