"use client";

import { useActionState } from "react";
import { loginAction, type LoginState } from "@/lib/actions/auth";

export function LoginForm({ next }: { next: string }) {
  const [state, action, pending] = useActionState<LoginState, FormData>(loginAction, { error: null });
  return (
    <form action={action} className="login-form" style={{ display: "flex", flexDirection: "column", gap: 14 }}>
      <input type="hidden" name="next" value={next} />
      <label>
        User
        <input className="input" name="name" autoComplete="username" autoFocus={!state.name} defaultValue={state.name ?? ""} required />
      </label>
      <label>
        Password
        <input className="input" name="password" type="password" autoComplete="current-password" autoFocus={Boolean(state.name)} required />
      </label>
      {state.error ? (
        <div role="alert" className="error-box">
          {state.error}
        </div>
      ) : null}
      <button className="btn btn-primary" type="submit" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
