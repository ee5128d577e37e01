import { randomBytes } from "node:crypto";
export { addUser, createToken } from "@/lib/server/auth/users";

export function randomPasswordForTests(): string {
  return `pw-${randomBytes(9).toString("base64url")}`;
}
