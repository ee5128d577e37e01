"use client";
/**
 * Step navigation row: ◀ Prev · Train/Eval step [input] (k/N) · Next ▶ · newest · eval
 * toggle. The input offers the existing ids; an unknown number is not opened: a note says
 * there is no such step and offers the nearest (Enter again opens it; the original
 * navigated blindly and showed 0/N). `[` / `]` step too.
 */
import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { usePrefetchStep } from "@/lib/client/rollout-queries";
import { describeIds, stepHref, stepPosition } from "@/lib/rollout-view/nav";
import { useShortcuts } from "@/components/charts/use-shortcuts";

export interface StepNavProps {
  runId: string;
  step: number;
  evaluation: boolean;
  ids: { train: number[]; eval: number[] };
  /** Query string carried over to the neighbouring steps (tab, sort, filters…). */
  carry: string;
}

export function StepNav({ runId, step, evaluation, ids, carry }: StepNavProps) {
  const router = useRouter();
  const list = evaluation ? ids.eval : ids.train;
  const pos = stepPosition(list, step);
  const prefetch = usePrefetchStep(runId, evaluation);
  const [draft, setDraft] = useState<{ step: number; text: string }>({ step, text: String(step) });
  // Why a typed step was not opened (no dump for it): shown next to the input (#15 defect 9).
  const [snap, setSnap] = useState<{ step: number; note: string } | null>(null);
  const snapNote = snap && snap.step === step ? snap.note : null;
  const text = draft.step === step ? draft.text : String(step);
  const href = (s: number) => stepHref(runId, s, evaluation, carry);

  // `[` and `]` anywhere on the page (not while typing) go to the previous / next step.
  useShortcuts((e) => {
    const target = e.key === "[" ? pos.prev : e.key === "]" ? pos.next : null;
    if (target === null) return false;
    router.push(stepHref(runId, target, evaluation, carry));
    return true;
  });

  const kind = evaluation ? "eval" : "train";
  const jump = () => {
    const n = Number(text.trim());
    if (!Number.isFinite(n) || text.trim() === "") {
      setSnap({ step, note: `“${text.trim()}” is not a step number` });
      return;
    }
    const wanted = Math.round(n);
    const target = stepPosition(list, wanted).nearest;
    if (target === null) {
      setSnap({ step, note: `this run has no ${kind} dumps` });
      return;
    }
    setDraft({ step, text: String(target) });
    if (target !== wanted) {
      // not opened: say why and offer the nearest step (Enter again opens it)
      setSnap({ step, note: `no ${kind} step ${wanted} (dumps: ${describeIds(list)}) — nearest is ${target}${target === step ? ", shown" : ", Enter opens it"}` });
      return;
    }
    setSnap(null);
    if (target !== step) router.push(href(target));
  };

  const other = evaluation ? ids.train : ids.eval;
  const hasOther = other.includes(step);
  const datalistId = `rv-steps-${evaluation ? "eval" : "train"}`;
  return (
    <nav className="rv-controls" aria-label="Step navigation">
      {pos.prev !== null ? (
        <Link className="rv-btn" href={href(pos.prev)} onMouseEnter={() => prefetch(pos.prev)} title="previous step ( [ )">
          ◀ Prev
        </Link>
      ) : (
        <span className="rv-btn rv-btn-off" aria-disabled="true">
          ◀ Prev
        </span>
      )}
      <label className="rv-steplabel">
        {evaluation ? "Eval step" : "Train step"}
        <input
          className="rv-input rv-stepinput"
          type="number"
          aria-label="Go to step"
          list={datalistId}
          value={text}
          aria-describedby={snapNote ? "rv-step-snap" : undefined}
          onChange={(e) => setDraft({ step, text: e.target.value })}
          onKeyDown={(e) => {
            if (e.key === "Enter") jump();
          }}
          onBlur={() => setDraft({ step, text: String(step) })}
        />
      </label>
      <datalist id={datalistId}>
        {list.map((id) => (
          <option key={id} value={id} />
        ))}
      </datalist>
      <span className="muted" data-testid="step-position">
        ({pos.index + 1}/{pos.count})
      </span>
      {snapNote ? (
        <span id="rv-step-snap" className="warn-text small" role="status" data-testid="step-snap-note">
          {snapNote}
        </span>
      ) : null}
      {pos.next !== null ? (
        <Link className="rv-btn" href={href(pos.next)} onMouseEnter={() => prefetch(pos.next)} title="next step ( ] )">
          Next ▶
        </Link>
      ) : (
        <span className="rv-btn rv-btn-off" aria-disabled="true">
          Next ▶
        </span>
      )}
      {pos.newest !== null && pos.newest !== step ? (
        <Link className="rv-btn" href={href(pos.newest)}>
          newest ({pos.newest}) ⇥
        </Link>
      ) : null}
      {hasOther ? (
        <Link className="rv-btn" href={stepHref(runId, step, !evaluation)}>
          {evaluation ? "Train view" : "Eval view"}
        </Link>
      ) : null}
      <span className="muted rv-hint">[ / ] = prev / next step</span>
    </nav>
  );
}
