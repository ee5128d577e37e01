import "server-only";
import { redirect } from "next/navigation";
import { auth } from "@/lib/server/auth/nextauth";
import type { Role } from "@/lib/server/auth/users";

export interface PageUser {
  name: string;
  role: Role;
}

/** For server components: the signed-in user, or a redirect to the login page. */
export async function requirePageUser(next = "/"): Promise<PageUser> {
  const session = await auth();
  const name = session?.user?.name;
  if (!name) redirect(`/login?next=${encodeURIComponent(next)}`);
  return { name, role: session.user.role };
}
