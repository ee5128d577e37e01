/**
 * The lane-selection grammar (docs/api.md 8.8), one implementation for server and browser:
 * `g:0-31,rank:4,node:10.0.0.2,gpu:10.0.0.1:3,engine:15000,role:train,every:8`. A
 * selection is a union of (node, gpu) lanes; empty or `all` means no filter. Parse errors
 * are 400s with the reference server's messages. Also the one lane key. Zod-free (the
 * browser imports it); the contract of `GET /api/timeline/lanes` is lib/contracts/timeline-lanes.ts.
 */
import { badRequest } from "@/lib/contracts/errors";

/** The one key of a lane: `node:gpu` — also its label in the JSON API (the node may hold `:`). */
export function laneKey(node: string, gpu: number): string {
  return `${node}:${gpu}`;
}

export type LaneTerm =
  | { kind: "g" | "rank"; from: number; to: number }
  | { kind: "node" | "engine"; value: string }
  | { kind: "gpu"; node: string; gpu: number }
  | { kind: "every"; stride: number }
  | { kind: "role"; role: "train" | "rollout" };

/** What a term can match on; `ranks`, `engine_addrs`, `roles` come from the lane catalog. */
export interface LaneLike {
  node: string;
  gpu: number;
  index: number;
  ranks?: readonly number[];
  engine_addrs?: readonly string[];
  roles?: readonly string[];
}

/** Python `int(s)` for a decimal string (whitespace, sign and `_` separators allowed). */
export function pyInt(s: string): number {
  const t = s.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) throw badRequest(`invalid literal for int() with base 10: '${s}'`);
  return Number(t.replace(/_/g, ""));
}

function range(value: string): [number, number] {
  const dash = value.indexOf("-");
  if (dash < 0) {
    const n = pyInt(value);
    return [n, n];
  }
  const a = pyInt(value.slice(0, dash));
  const rest = value.slice(dash + 1);
  return [a, rest === "" ? a : pyInt(rest)];
}

/** The terms of a selection, or null for "no filter". Throws a 400 ApiError with the server's message. */
export function parseLaneSelection(grammar: string | null | undefined): LaneTerm[] | null {
  if (grammar == null) return null;
  const g = grammar.trim();
  if (g === "" || g === "all") return null;
  const terms: LaneTerm[] = [];
  for (const raw of g.split(",")) {
    const tok = raw.trim();
    if (tok === "") continue;
    const colon = tok.indexOf(":");
    const kind = colon < 0 ? tok : tok.slice(0, colon);
    const value = colon < 0 ? "" : tok.slice(colon + 1);
    if (value === "") throw badRequest(`bad lane selector '${tok}': expected kind:value`);
    switch (kind) {
      case "g":
      case "rank": {
        const [from, to] = range(value);
        terms.push({ kind, from, to });
        break;
      }
      case "node":
      case "engine":
        terms.push({ kind, value });
        break;
      case "gpu": {
        const at = value.lastIndexOf(":");
        if (at <= 0) throw badRequest(`bad lane selector '${tok}': expected gpu:<node>:<index>`);
        terms.push({ kind, node: value.slice(0, at), gpu: pyInt(value.slice(at + 1)) });
        break;
      }
      case "every": {
        const stride = pyInt(value);
        if (stride <= 0) throw badRequest(`bad lane selector '${tok}': stride must be positive`);
        terms.push({ kind, stride });
        break;
      }
      case "role":
        if (value !== "train" && value !== "rollout") throw badRequest(`bad lane selector '${tok}': role must be train or rollout`);
        terms.push({ kind, role: value });
        break;
      default:
        throw badRequest(`unknown lane selector kind '${kind}' in '${tok}'`);
    }
  }
  return terms;
}

/** Whether lane `l` is selected by one term. */
export function termMatches(t: LaneTerm, l: LaneLike): boolean {
  switch (t.kind) {
    case "g":
      return l.index >= t.from && l.index <= t.to;
    case "rank":
      return (l.ranks ?? []).some((r) => r >= t.from && r <= t.to);
    case "node":
      return l.node === t.value;
    case "engine":
      return (l.engine_addrs ?? []).some((a) => a.includes(t.value));
    case "gpu":
      return l.node === t.node && l.gpu === t.gpu;
    case "every":
      return l.index % t.stride === 0;
    case "role":
      return (l.roles ?? []).includes(t.role);
  }
}

/**
 * The keys a selection names: every matching lane of `lanes`, plus each `gpu:` term's lane
 * even when the index does not list it (the reference selects it anyway).
 */
export function selectedKeys(terms: readonly LaneTerm[], lanes: readonly LaneLike[]): Set<string> {
  const out = new Set<string>();
  for (const t of terms) {
    if (t.kind === "gpu") out.add(laneKey(t.node, t.gpu));
    else for (const l of lanes) if (termMatches(t, l)) out.add(laneKey(l.node, l.gpu));
  }
  return out;
}

/** The lanes of `lanes` a selection keeps, in their order; all of them for "no filter". */
export function matchLanes<T extends LaneLike>(grammar: string | null | undefined, lanes: readonly T[]): T[] {
  const terms = parseLaneSelection(grammar);
  if (terms === null) return [...lanes];
  const keys = selectedKeys(terms, lanes);
  return lanes.filter((l) => keys.has(laneKey(l.node, l.gpu)));
}
