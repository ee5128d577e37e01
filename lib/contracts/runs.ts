import { z } from "zod";
import { QueryBool, QueryText } from "@/lib/contracts/common";
import { LIMITS } from "@/lib/contracts/limits";

export const RunSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    path: z.string().describe("path relative to its runs root"),
    first_ts: z.number().nullable(),
    last_ts: z.number().nullable().describe("newest file modification time (unix s)"),
    steps: z.number().int(),
    live: z.boolean().describe("written to in the last 60 s"),
    capabilities: z
      .object({ has_timeline: z.boolean(), has_dumps: z.boolean(), has_trajectories: z.boolean() })
      .strict(),
    args: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .nullable()
      .describe("meta.json args flattened to dotted paths (arrays and objects as JSON text); null without a snapshot (rlboard extension)"),
    tags: z.array(z.string()).describe("the lab's tags for the run, kept in the server's database (rlboard extension)"),
    notes: z.string().describe("the lab's notes for the run (rlboard extension)"),
    state: z
      .enum(["running", "finished", "stalled", "crashed", "killed"])
      .nullable()
      .describe("run health (docs/api.md 9.5.2); null until judged (rlboard extension)"),
    alarm: z
      .object({ level: z.enum(["critical", "warning"]), text: z.string() })
      .strict()
      .nullable()
      .describe("the worst alarm: a crashed/stalled cause, else the worst log signal (rlboard extension)"),
  })
  .strict();
export type RunSummary = z.infer<typeof RunSummary>;

export const GetRunsQuery = z.object({ refresh: QueryBool.optional(), q: QueryText("q", LIMITS.runs_q_chars).optional() });
export const GetRunsResponse = z
  .object({ mode: z.enum(["single", "multi"]), runs: z.array(RunSummary) })
  .strict();
export type GetRunsResponse = z.infer<typeof GetRunsResponse>;

export const GetHealthResponse = z.object({ ok: z.literal(true) }).strict();
