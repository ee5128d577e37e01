"use server";
/**
 * Login/logout server actions. Errors come back as a message for the form; a successful
 * sign-in redirects (Auth.js throws Next's redirect, which must propagate).
 */
import { formText } from "@/lib/actions/form";
import { AuthError } from "next-auth";
import { signIn, signOut } from "@/lib/server/auth/nextauth";
import { safeNextPath } from "@/lib/server/auth/next-path";
import { storageFailureMessage } from "@/lib/contracts/errors";

export interface LoginState {
  error: string | null;
  /** Echoed back so the user name survives React's form reset after a failed attempt. */
  name?: string;
}

export async function loginAction(_prev: LoginState, form: FormData): Promise<LoginState> {
  const name = formText(form, "name", "").trim();
  const password = formText(form, "password", "");
  const next = safeNextPath(formText(form, "next", "/"));
  if (!name || !password) return { error: "Enter your user name and password.", name };
  try {
    await signIn("credentials", { name, password, redirectTo: next });
    return { error: null };
  } catch (err) {
    if (err instanceof AuthError) {
      // The user database could not be read (a full disk): not the person's password.
      const storage = storageFailureMessage(err);
      if (storage) return { error: `Sign-in failed: ${storage}.`, name };
      const code = (err as AuthError & { code?: string }).code;
      if (code === "locked") {
        return { error: "Too many failed attempts: sign-in for this account is locked for 5 minutes. Try again later or ask an admin.", name };
      }
      return { error: "Wrong user name or password.", name };
    }
    throw err;
  }
}

export async function logoutAction(): Promise<void> {
  await signOut({ redirectTo: "/login" });
}

export async function oidcLoginAction(form: FormData): Promise<void> {
  const provider = formText(form, "provider", "");
  const next = safeNextPath(formText(form, "next", "/"));
  await signIn(provider, { redirectTo: next });
}
