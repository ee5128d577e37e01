/**
 * `GET /api/compare?runs=A,B[,…]` (docs/api.md "GET /api/compare"): the run-vs-run report
 * (lib/compare/report.ts). `values[i]` belongs to `runs[i]`; deltas and % are against the
 * baseline `runs[0]` and null for the baseline itself; NaN/±Inf travel as null.
 */
import { z } from "zod";
import { QueryText } from "@/lib/contracts/common";

/** Run ids are at most 1024 characters; 8 of them plus commas. */
export const COMPARE_RUNS_CHARS = 8 * 1025;

export const GetCompareQuery = z.object({
  runs: QueryText("runs", COMPARE_RUNS_CHARS)
    .default("")
    .describe("2–8 comma-separated run ids (from /api/runs); the first is the baseline"),
});
export type GetCompareQuery = z.infer<typeof GetCompareQuery>;

const Num = z.number().nullable();
const Json: z.ZodType<unknown> = z.unknown();

export const CompareKpi = z
  .object({
    key: z.string(),
    label: z.string(),
    statistic: z.enum(["median", "peak"]),
    headline: z.boolean(),
    values: z.array(Num),
    delta: z.array(Num),
    pct: z.array(Num),
    n: z.array(z.number().int()),
  })
  .strict();
export type CompareKpi = z.infer<typeof CompareKpi>;

export const CompareConfigDelta = z
  .object({ key: z.string(), values: z.array(Json), absent: z.array(z.boolean()), identity: z.boolean() })
  .strict();

export const CompareVerdict = z
  .object({
    kind: z.enum(["single", "multiple", "identical", "unknown"]),
    keys: z.array(z.string()),
    missing_args: z.array(z.number().int()),
    message: z.string(),
  })
  .strict();
export type CompareVerdict = z.infer<typeof CompareVerdict>;

export const CompareMover = z
  .object({
    key: z.string(),
    label: z.string(),
    shift: Num,
    shifts: z.array(Num),
    spread: Num,
    medians: z.array(Num),
  })
  .strict();

export const GetCompareResponse = z
  .object({
    baseline: z.string(),
    runs: z.array(
      z
        .object({
          id: z.string(),
          name: z.string(),
          start_ts: Num,
          wandb_url: z.string().nullable(),
          has_args: z.boolean(),
        })
        .strict(),
    ),
    kpis: z.array(CompareKpi),
    config_delta: z.array(CompareConfigDelta),
    verdict: CompareVerdict,
    availability: z
      .object({
        items: z.array(z.object({ key: z.string(), label: z.string(), values: z.array(z.boolean()) }).strict()),
        changed: z.array(z.string()),
      })
      .strict(),
    movers: z.array(CompareMover),
    warnings: z.array(z.string()),
  })
  .strict();
export type GetCompareResponse = z.infer<typeof GetCompareResponse>;
