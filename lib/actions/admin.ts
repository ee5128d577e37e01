"use server";
/**
 * Admin page actions: the same operations as `npm run users`, plus run restrictions.
 * Every action re-checks the caller's admin role server-side (the page hiding buttons is
 * not a permission check) and returns a message for the form.
 */
import { formText } from "@/lib/actions/form";
import { revalidatePath } from "next/cache";
import { currentPageUser } from "@/lib/server/session";
import { getDb } from "@/lib/server/db";
import { addUser, createToken, removeUser, revokeTokens, setPassword, setRole, UserError } from "@/lib/server/auth/users";
import { restrictRun, unrestrictRun } from "@/lib/server/auth/run-access";

export interface AdminState {
  ok: string | null;
  error: string | null;
  token?: string;
}

async function requireAdmin(): Promise<void> {
  const user = await currentPageUser();
  if (user?.role !== "admin") throw new UserError("admin role required");
}

function field(form: FormData, name: string): string {
  return formText(form, name).trim();
}

async function run(op: () => Promise<AdminState> | AdminState): Promise<AdminState> {
  try {
    await requireAdmin();
    const out = await op();
    revalidatePath("/admin");
    return out;
  } catch (err) {
    if (err instanceof UserError || err instanceof Error) return { ok: null, error: err.message };
    return { ok: null, error: "failed" };
  }
}

export async function addUserAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(async () => {
    const name = field(form, "name");
    const role = field(form, "role") === "admin" ? "admin" : "member";
    await addUser(getDb(), name, formText(form, "password", ""), role);
    return { ok: `added ${role} '${name}'`, error: null };
  });
}

export async function removeUserAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const name = field(form, "name");
    removeUser(getDb(), name);
    return { ok: `removed '${name}'`, error: null };
  });
}

export async function setPasswordAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(async () => {
    const name = field(form, "name");
    await setPassword(getDb(), name, formText(form, "password", ""));
    return { ok: `password changed for '${name}'`, error: null };
  });
}

export async function setRoleAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const name = field(form, "name");
    const role = field(form, "role") === "admin" ? "admin" : "member";
    setRole(getDb(), name, role);
    return { ok: `'${name}' is now ${role}`, error: null };
  });
}

export async function createTokenAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const name = field(form, "name");
    const token = createToken(getDb(), name);
    return { ok: `token created for '${name}' — copy it now, it is not shown again`, error: null, token };
  });
}

export async function revokeTokensAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const name = field(form, "name");
    return { ok: `revoked ${revokeTokens(getDb(), name)} token(s) of '${name}'`, error: null };
  });
}

export async function restrictRunAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const runId = field(form, "run");
    if (!runId) throw new UserError("choose a run");
    const members = field(form, "members")
      .split(/[\s,]+/)
      .filter(Boolean);
    restrictRun(getDb(), runId, members);
    return { ok: `trajectories of '${runId}' restricted to admins${members.length ? ` and ${members.join(", ")}` : ""}`, error: null };
  });
}

export async function unrestrictRunAction(_: AdminState, form: FormData): Promise<AdminState> {
  return run(() => {
    const runId = field(form, "run");
    unrestrictRun(getDb(), runId);
    return { ok: `'${runId}' is visible to every member again`, error: null };
  });
}
