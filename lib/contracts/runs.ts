import { z } from "zod";
import { QueryBool, QueryText } from "@/lib/contracts/common";
import { RUN_STATES } from "@/lib/contracts/health";
import { LIMITS } from "@/lib/contracts/limits";

export const RunSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    path: z.string().describe("path relative to its runs root"),
    first_ts: z.number().nullable(),
    last_ts: z.number().nullable().describe("newest file modification time (unix s)"),
    steps: z.number().int().describe("rollout dumps on disk (train steps, eval dumps left out); the run's training progress is last_step"),
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
      .enum(RUN_STATES)
      .nullable()
      .describe("run health (docs/api.md 9.5.2); null until judged (rlboard extension)"),
    alarm: z
      .object({ level: z.enum(["critical", "warning"]), text: z.string() })
      .strict()
      .nullable()
      .describe("the worst alarm: a crashed/stalled cause, else the worst advisory alarm, else the worst log signal (rlboard extension)"),
    alarms: z.number().int().describe("critical + warning alarms of the run: lifecycle cause, advisories, fired log signals; 0 until judged (rlboard extension)"),
    last_step: z
      .number()
      .int()
      .nullable()
      .describe("newest logged training step (metrics rollout/step; a dump-only run: its newest dump); null until judged or without any (rlboard extension)"),
  })
  .strict();
export type RunSummary = z.infer<typeof RunSummary>;

export const GetRunsQuery = z.object({ refresh: QueryBool.optional(), q: QueryText("q", LIMITS.runs_q_chars).optional() });
export const GetRunsResponse = z
  .object({ mode: z.enum(["single", "multi"]), runs: z.array(RunSummary) })
  .strict();
export type GetRunsResponse = z.infer<typeof GetRunsResponse>;

export const GetHealthResponse = z.object({ ok: z.literal(true) }).strict();
