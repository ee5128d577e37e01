/**
 * The JSONL line codec shared by the small append-only streams (log signals, request
 * timing): one JSON object per line; on read, complete lines only (a torn last line is a
 * write in progress) and a corrupt or off-schema line fails only itself, counted in `bad`.
 */
import type { z } from "zod";

export function serializeJsonl(records: readonly unknown[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join("");
}

export function parseJsonlText<S extends z.ZodType>(text: string, schema: S): { records: z.output<S>[]; bad: number } {
  const records: z.output<S>[] = [];
  let bad = 0;
  for (const line of text.slice(0, text.lastIndexOf("\n") + 1).split("\n")) {
    if (!line) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      bad++;
      continue;
    }
    const r = schema.safeParse(raw);
    if (r.success) records.push(r.data);
    else bad++;
  }
  return { records, bad };
}
