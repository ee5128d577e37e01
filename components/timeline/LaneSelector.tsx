"use client";

/**
 * Lane selection: chips for the terms in the URL, an input that appends terms (Enter),
 * quick picks from the outlier endpoint, the cap warning and inline grammar errors.
 * The input owns its text: a live refresh never wipes what is being typed (a bug of the
 * original, which rebuilt this row every 5 s).
 */
import { useState } from "react";
import { addTerms, checkSelection, GRAMMAR_HINT, NOTHING, removeTerm, splitTerms } from "@/lib/charts/lane-selection";

/**
 * Terms the grammar accepts but that can match nothing: a range written high–low
 * (`g:5-2` is empty, as in the original's range()). Said in place, with the fix (#15 defect 9).
 */
export function reversedRangeNotes(sel: string): string[] {
  const out: string[] = [];
  for (const t of splitTerms(sel)) {
    const m = /^(g|rank):\s*(\d[\d_]*)\s*-\s*(\d[\d_]*)$/.exec(t.trim());
    if (!m) continue;
    const a = Number(m[2]!.replace(/_/g, ""));
    const b = Number(m[3]!.replace(/_/g, ""));
    if (a > b) out.push(`${t} matches no lane: a range runs low to high — ${m[1]}:${b}-${a}`);
  }
  return out;
}

export function LaneSelector(props: {
  selection: string;
  onChange: (sel: string) => void;
  serverError: string | null;
  total: number | null;
  shown: number;
  onPick: (criterion: string) => Promise<string | null>;
}) {
  const [text, setText] = useState("");
  const [localError, setLocalError] = useState<string | null>(null);
  const [picking, setPicking] = useState<string | null>(null);
  const [pickMsg, setPickMsg] = useState<string | null>(null);
  const terms = splitTerms(props.selection);

  const submit = () => {
    const typed = text.trim();
    if (!typed) return;
    const next = typed === "all" ? "" : addTerms(props.selection, typed);
    const err = checkSelection(next) ?? reversedRangeNotes(typed)[0] ?? null;
    if (err) {
      setLocalError(err);
      return;
    }
    setLocalError(null);
    setText("");
    props.onChange(next);
  };

  const pick = async (criterion: string) => {
    setPicking(criterion);
    setPickMsg(null);
    try {
      setPickMsg(await props.onPick(criterion));
    } finally {
      setPicking(null);
    }
  };

  const error = localError ?? props.serverError;
  const warnings = reversedRangeNotes(props.selection);
  return (
    <div className="lane-row" data-testid="lane-selector">
      <div className="control-row">
        <span className="muted">Lanes</span>
        {terms.length === 0 ? <span className="muted">all</span> : null}
        {terms.map((t, i) => (
          <span key={`${t}-${i}`} className="chip mono" data-testid="lane-chip">
            {t === NOTHING ? "none" : t}
            <button type="button" className="chip-x" aria-label={`Remove ${t}`} onClick={() => props.onChange(removeTerm(props.selection, i))}>
              ×
            </button>
          </span>
        ))}
        <input
          className="input lane-input mono"
          aria-label="Add lanes"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "lane-error" : undefined}
          placeholder={`add: ${GRAMMAR_HINT}`}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            if (localError) setLocalError(null);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              submit();
            } else if (e.key === "Escape") {
              setText("");
              setLocalError(null);
            }
          }}
        />
        <button type="button" className="btn btn-small" disabled={picking !== null} onClick={() => void pick("lowest_util")}>
          {picking === "lowest_util" ? "picking…" : "pick: lowest util"}
        </button>
        <button type="button" className="btn btn-small" disabled={picking !== null} onClick={() => void pick("slowest_phase:update_weights")}>
          {picking === "slowest_phase:update_weights" ? "picking…" : "pick: slowest update_weights"}
        </button>
        {terms.length > 0 ? (
          <button type="button" className="btn btn-small" onClick={() => props.onChange("")}>
            Clear
          </button>
        ) : null}
      </div>
      <div className="lane-status" aria-live="polite">
        {props.total !== null ? (
          <span className="muted small" data-testid="lane-count">
            {props.total} lane{props.total === 1 ? "" : "s"} shown
          </span>
        ) : null}
        {props.total !== null && props.total > props.shown ? (
          <span className="muted small" data-testid="lane-paging">
            rows are drawn {props.shown} at a time as you scroll (narrow with g:…, rank:… or every:…)
          </span>
        ) : null}
        {props.total === 0 && !error ? <span className="warn-text small">the selection matches no lane</span> : null}
        {warnings.map((w) => (
          <span key={w} className="warn-text small" data-testid="lane-warning">
            {w}
          </span>
        ))}
        {pickMsg ? <span className="muted small">{pickMsg}</span> : null}
        {error ? (
          <span id="lane-error" className="error-text small" role="alert" data-testid="lane-error">
            {error}
          </span>
        ) : null}
      </div>
    </div>
  );
}
