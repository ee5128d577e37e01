"use client";

import { useActionState, type ReactNode } from "react";
import type { AdminState } from "@/lib/actions/admin";

type Action = (prev: AdminState, form: FormData) => Promise<AdminState>;

/** A form bound to one admin server action, showing its result (and a new token once). */
export function ActionForm({ action, children, label }: { action: Action; children: ReactNode; label: string }) {
  const [state, formAction, pending] = useActionState<AdminState, FormData>(action, { ok: null, error: null });
  return (
    <form action={formAction} aria-label={label}>
      <div className="form-row">
        {children}
        <button className="btn btn-primary" type="submit" disabled={pending}>
          {label}
        </button>
      </div>
      {state.error ? (
        <div className="error-box" role="alert">
          {state.error}
        </div>
      ) : null}
      {state.ok ? (
        <div className="ok-box" role="status">
          {state.ok}
          {state.token ? (
            <div className="token-out" data-testid="new-token">
              {state.token}
            </div>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
