import type { ReactNode } from "react";
import "@/app/rollout-views.css";

/** Rollouts and Sample views share one stylesheet and the run-body frame. */
export default function RolloutLayout({ children }: { children: ReactNode }) {
  return <div className="run-body">{children}</div>;
}
