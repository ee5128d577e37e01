/**
 * GET /api/timeline/lanes (docs/api.md 8.8): the query and the answer. The grammar itself
 * is lib/contracts/lanes.ts, zod-free so that the browser can import it without zod.
 */
import { z } from "zod";

export const GetTimelineLanesQuery = z.object({
  lanes: z.string().optional().describe("a lane selection (docs/api.md 8.8); absent, empty or `all`: every lane"),
});
export type GetTimelineLanesQuery = z.infer<typeof GetTimelineLanesQuery>;

export const ResolvedLane = z.object({
  key: z.string(),
  node: z.string(),
  gpu: z.number().int(),
  index: z.number().int(),
  /** the lane catalog's roles (`train`, `rollout`) */
  roles: z.array(z.string()),
});
export type ResolvedLane = z.infer<typeof ResolvedLane>;
export const GetTimelineLanesResponse = z.object({
  /** the selection as given (null when absent) */
  lanes: z.string().nullable(),
  /** true when the selection is no filter */
  all: z.boolean(),
  /** the run's lanes the selection keeps, in index order */
  selected: z.array(ResolvedLane),
  /** lanes named by `gpu:` terms that the run's lane index does not list */
  unknown: z.array(z.string()),
  total: z.number().int(),
});
export type GetTimelineLanesResponse = z.infer<typeof GetTimelineLanesResponse>;
