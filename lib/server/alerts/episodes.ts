/**
 * Alert episodes (docs/api.md 9.5.5): a rule posts once when it starts firing on a run and
 * is re-armed when it clears. Advisory rules clear when the advisory is gone; a log
 * signal fires when its count grows and clears after LOG_QUIET_S without a new line.
 */
export const LOG_QUIET_S = 600;

export interface Firing {
  rule: string;
  severity: "critical" | "warning" | "info";
  message: string;
}

export class EpisodeTracker {
  /** `run \0 rule` → when it last fired (unix s) */
  private readonly active = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  /**
   * One evaluation of `run`: `advisories` firing now, `signals` with their counts. Answers
   * what newly fired (to post) — episodes already open stay silent.
   */
  update(run: string, advisories: readonly Firing[], signals: readonly { signal: string; count: number; severity: Firing["severity"]; text: string }[], now: number): Firing[] {
    const out: Firing[] = [];
    const seen = new Set<string>();
    for (const a of advisories) {
      const key = `${run}\u0000${a.rule}`;
      seen.add(key);
      if (!this.active.has(key)) out.push(a);
      this.active.set(key, now);
    }
    for (const s of signals) {
      const rule = `log:${s.signal}`;
      const key = `${run}\u0000${rule}`;
      const ckey = `${run}\u0000${s.signal}`;
      const before = this.counts.get(ckey);
      this.counts.set(ckey, s.count);
      const grew = before === undefined ? false : s.count > before;
      if (grew) {
        if (!this.active.has(key)) out.push({ rule, severity: s.severity, message: s.text });
        this.active.set(key, now);
      }
      seen.add(key);
    }
    // clear: advisories not firing now; log signals quiet for LOG_QUIET_S
    for (const [key, at] of this.active) {
      if (!key.startsWith(`${run}\u0000`)) continue;
      const rule = key.slice(run.length + 1);
      if (rule.startsWith("log:") ? now - at > LOG_QUIET_S : !seen.has(key)) this.active.delete(key);
    }
    return out;
  }
}

/** A stable id for an advisory message: its numbers replaced, so a growing age is the same rule. */
export function advisoryRule(message: string): string {
  return `advisory:${message.replace(/\d+(?:\.\d+)?/g, "#").slice(0, 96)}`;
}
