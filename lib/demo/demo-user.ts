/**
 * The `demo` login of `npm run demo`: an admin (so the admin page is part of the tour)
 * whose password is replaced by a fresh random one on every start — a password printed
 * on a terminal yesterday stops working today. Lockouts of the demo login from earlier
 * sessions are cleared (whatever the address) so a stale lock never blocks the demo.
 */
import type { Db } from "@/lib/server/db";
import { clearUserFailures } from "@/lib/server/auth/lockout";
import { randomPassword } from "@/lib/server/auth/passwords";
import { addUser, findUser, setPassword, setRole } from "@/lib/server/auth/users";

export const DEMO_USER = "demo";

export interface DemoLogin {
  name: string;
  password: string;
  created: boolean;
}

export async function resetDemoUser(db: Db, password = randomPassword()): Promise<DemoLogin> {
  const existing = findUser(db, DEMO_USER);
  if (!existing) {
    await addUser(db, DEMO_USER, password, "admin");
  } else {
    await setPassword(db, DEMO_USER, password);
    if (existing.role !== "admin") setRole(db, DEMO_USER, "admin");
  }
  clearUserFailures(db, DEMO_USER);
  return { name: DEMO_USER, password, created: !existing };
}
