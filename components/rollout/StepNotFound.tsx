import { Link } from "@/components/shell/Link";
import { stepHref, stepPosition } from "@/lib/rollout-view/nav";

/** A step without a dump: say so, and link the nearest and newest steps that exist. */
export function StepNotFound({ runId, step, evaluation, ids }: { runId: string; step: string; evaluation: boolean; ids: { train: number[]; eval: number[] } }) {
  const list = evaluation ? ids.eval : ids.train;
  const n = Number(step);
  const pos = Number.isInteger(n) ? stepPosition(list, n) : stepPosition(list, list.at(-1) ?? 0);
  const kind = evaluation ? "eval" : "train";
  return (
    <div className="rv-notfound" role="alert">
      <h2>
        No {kind} dump for step {step}
      </h2>
      {list.length ? (
        <p>
          This run has {list.length} {kind} step{list.length === 1 ? "" : "s"} ({list[0]}–{list.at(-1)}).{" "}
          {pos.nearest !== null && pos.nearest !== pos.newest ? (
            <>
              <Link href={stepHref(runId, pos.nearest, evaluation)}>Nearest: step {pos.nearest}</Link> ·{" "}
            </>
          ) : null}
          {pos.newest !== null ? <Link href={stepHref(runId, pos.newest, evaluation)}>Open the newest step ({pos.newest})</Link> : null}
        </p>
      ) : (
        <p className="muted">This run has no {kind} dumps.</p>
      )}
      {(evaluation ? ids.train : ids.eval).includes(n) ? (
        <p>
          <Link href={stepHref(runId, n, !evaluation)}>Step {step} exists as a {evaluation ? "train" : "eval"} dump</Link>
        </p>
      ) : null}
    </div>
  );
}
