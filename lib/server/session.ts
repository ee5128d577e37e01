import "server-only";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { sessionUserFromCookies } from "@/lib/server/auth/session-token";
import type { Role } from "@/lib/server/auth/users";

export interface PageUser {
  name: string;
  role: Role;
}

/** The Cookie header of the request being rendered (server components and actions). */
async function requestCookieHeader(): Promise<string> {
  const jar = await cookies();
  return jar
    .getAll()
    .map((c) => `${c.name}=${encodeURIComponent(c.value)}`)
    .join("; ");
}

/** The signed-in user of this render/action, or null (no redirect). */
export async function currentPageUser(): Promise<PageUser | null> {
  const user = await sessionUserFromCookies(await requestCookieHeader());
  return user ? { name: user.name, role: user.role } : null;
}

/**
 * For server components: the signed-in user, or a redirect to the login page. Every
 * layout and page that reads run data calls this (directly or through page-run.ts)
 * before reading, so a render never depends on a sibling layout's check.
 */
export async function requirePageUser(next = "/"): Promise<PageUser> {
  const user = await currentPageUser();
  if (!user) redirect(`/login?next=${encodeURIComponent(next)}`);
  return user;
}
