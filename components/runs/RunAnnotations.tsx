"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useActionState, useState } from "react";
import { saveRunAnnotationAction, type AnnotationState } from "@/lib/actions/runs";
import type { RunSummary } from "@/lib/contracts/runs";
import { queryKeys } from "@/lib/client/queries";

/** Tags and notes of one run: shown in the row, edited in place by any member (kept in SQLite). */
export function RunAnnotations({ run }: { run: RunSummary }) {
  const [editing, setEditing] = useState(false);
  const qc = useQueryClient();
  const [state, formAction, pending] = useActionState<AnnotationState, FormData>(
    async (prev, form) => {
      const out = await saveRunAnnotationAction(prev, form);
      if (out.ok) {
        setEditing(false);
        await qc.invalidateQueries({ queryKey: queryKeys.runs("") });
      }
      return out;
    },
    { ok: null, error: null },
  );
  if (!editing)
    return (
      <div className="run-notes">
        {run.tags.map((t) => (
          <span key={t} className="badge run-tag">
            {t}
          </span>
        ))}
        {run.notes ? <span className="run-note" title={run.notes}>{run.notes}</span> : null}
        <button type="button" className="btn btn-small" aria-label={`Edit tags and notes of ${run.name}`} onClick={() => setEditing(true)}>
          {run.tags.length || run.notes ? "edit" : "+ tags/notes"}
        </button>
      </div>
    );
  return (
    <form action={formAction} className="run-notes-form" aria-label={`Tags and notes of ${run.name}`}>
      <input type="hidden" name="run" value={run.id} />
      <input className="input" name="tags" defaultValue={run.tags.join(", ")} placeholder="tags, comma-separated" aria-label="Tags" />
      <textarea className="input" name="notes" defaultValue={run.notes} placeholder="notes" aria-label="Notes" rows={2} />
      <div className="form-row">
        <button className="btn btn-primary btn-small" type="submit" disabled={pending}>
          Save
        </button>
        <button className="btn btn-small" type="button" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
      {state.error ? (
        <div className="error-box" role="alert">
          {state.error}
        </div>
      ) : null}
    </form>
  );
}
