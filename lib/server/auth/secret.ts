/**
 * The session-signing secret: AUTH_SECRET when set, else a random secret generated on
 * first start and kept in `<data-dir>/auth-secret` with mode 0600 (so restarts keep users
 * signed in and no operator has to invent a secret).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export function loadOrCreateSecret(dataDir: string, fromEnv: string | null): string {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, "auth-secret");
  try {
    const existing = fs.readFileSync(file, "utf8").trim();
    if (existing.length >= 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  // wx: never clobber a secret another process wrote a moment ago.
  try {
    fs.writeFileSync(file, secret + "\n", { mode: 0o600, flag: "wx" });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return fs.readFileSync(file, "utf8").trim();
    throw err;
  }
}
