/**
 * Lane-selection grammar (docs/api.md 8.8): `g:0-31,rank:4,node:10.0.0.2,gpu:10.0.0.1:3,
 * engine:15000,role:train,every:8`. The result is a union of (node, gpu) pairs; `null`
 * means "no filter". Errors are 400s with the reference's messages.
 */
import { badRequest } from "@/lib/contracts/errors";
import type { LaneInfo } from "@/lib/store/telemetry";

export class LaneSet {
  private readonly keys = new Set<string>();
  add(node: string, gpu: number): void {
    this.keys.add(laneKey(node, gpu));
  }
  has(node: string, gpu: number): boolean {
    return this.keys.has(laneKey(node, gpu));
  }
}

export function laneKey(node: string, gpu: number): string {
  return `${node}\u0000${gpu}`;
}

/** `"<node>:<gpu>"` — the lane label of the JSON API. */
export function laneLabel(node: string, gpu: number): string {
  return `${node}:${gpu}`;
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

export function resolveLanes(grammar: string | null | undefined, lanes: readonly LaneInfo[]): LaneSet | null {
  if (grammar == null) return null;
  const g = grammar.trim();
  if (g === "" || g === "all") return null;
  const out = new LaneSet();
  for (const raw of g.split(",")) {
    const tok = raw.trim();
    if (tok === "") continue;
    const colon = tok.indexOf(":");
    const kind = colon < 0 ? tok : tok.slice(0, colon);
    const value = colon < 0 ? "" : tok.slice(colon + 1);
    if (value === "") throw badRequest(`bad lane selector '${tok}': expected kind:value`);
    switch (kind) {
      case "rank": {
        const [a, b] = range(value);
        for (const l of lanes) if (l.ranks.some((r) => r >= a && r <= b)) out.add(l.node, l.gpu);
        break;
      }
      case "g": {
        const [a, b] = range(value);
        for (const l of lanes) if (l.index >= a && l.index <= b) out.add(l.node, l.gpu);
        break;
      }
      case "node":
        for (const l of lanes) if (l.node === value) out.add(l.node, l.gpu);
        break;
      case "gpu": {
        const at = value.lastIndexOf(":");
        if (at <= 0) throw badRequest(`bad lane selector '${tok}': expected gpu:<node>:<index>`);
        out.add(value.slice(0, at), pyInt(value.slice(at + 1)));
        break;
      }
      case "engine":
        for (const l of lanes) if (l.engine_addrs.some((a) => a.includes(value))) out.add(l.node, l.gpu);
        break;
      case "every": {
        const k = pyInt(value);
        if (k <= 0) throw badRequest(`bad lane selector '${tok}': stride must be positive`);
        for (const l of lanes) if (l.index % k === 0) out.add(l.node, l.gpu);
        break;
      }
      case "role":
        if (value !== "train" && value !== "rollout")
          throw badRequest(`bad lane selector '${tok}': role must be train or rollout`);
        for (const l of lanes) if (l.roles.includes(value)) out.add(l.node, l.gpu);
        break;
      default:
        throw badRequest(`unknown lane selector kind '${kind}' in '${tok}'`);
    }
  }
  return out;
}
