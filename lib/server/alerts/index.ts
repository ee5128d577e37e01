/**
 * Alerts (docs/api.md 9.5.5): a background loop in the server process judges every live
 * run every `intervalMs` — the advisory rules (critical and warning) and the log signals —
 * and posts what newly fired to every `serve --alert-webhook URL`, once per episode,
 * unless the run is muted. Started once per process (instrumentation.ts register()).
 */
import { getAdvisory } from "@/lib/advisory";
import { serverEnv } from "@/lib/env";
import { runStatusOf } from "@/lib/health/server";
import { getDb } from "@/lib/server/db";
import { getRegistry, getRunOrThrow } from "@/lib/server/runs/context";
import { advisoryRule, EpisodeTracker, type Firing } from "@/lib/server/alerts/episodes";
import { mutedRuns } from "@/lib/server/alerts/mutes";
import { AlertSender, type Alert } from "@/lib/server/alerts/sender";

export const ALERT_INTERVAL_MS = 30_000;

export interface AlertLoopOptions {
  urls: readonly string[];
  intervalMs?: number;
  /** Origin for links (`serve --public-url`); null: links are paths. */
  publicUrl?: string | null;
  sender?: AlertSender;
  log?: (line: string) => void;
}

export class AlertLoop {
  readonly sender: AlertSender;
  readonly tracker = new EpisodeTracker();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<Alert[]> | null = null;
  private readonly log: (line: string) => void;

  constructor(private readonly opts: AlertLoopOptions) {
    this.log = opts.log ?? ((l) => console.warn(l));
    this.sender = opts.sender ?? new AlertSender({ urls: opts.urls, log: this.log });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? ALERT_INTERVAL_MS);
    this.timer.unref();
    void this.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over the live runs; answers the alerts it queued. Overlapping calls share one pass. */
  tick(now = Date.now() / 1000): Promise<Alert[]> {
    this.running ??= this.pass(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private link(path: string): string {
    return `${this.opts.publicUrl ?? ""}${path}`;
  }

  private async pass(now: number): Promise<Alert[]> {
    const queued: Alert[] = [];
    let runs;
    try {
      runs = getRegistry().list().filter((r) => r.live);
    } catch (err) {
      this.log(`[rlboard] alerts: cannot list runs: ${(err as Error).message}`);
      return queued;
    }
    const muted = mutedRuns(getDb());
    for (const r of runs) {
      try {
        const ctx = await getRunOrThrow(r.id);
        const [adv, status] = await Promise.all([getAdvisory(ctx, {}), runStatusOf(ctx)]);
        const advisories: Firing[] = adv.advisories
          .filter((a) => a.level !== "info")
          .map((a) => ({ rule: advisoryRule(a.message), severity: a.level, message: a.message }));
        const signals = status.log_signals.map((s) => {
          const sample = s.samples[s.samples.length - 1];
          return {
            signal: s.signal,
            count: s.count,
            severity: s.severity,
            text: `${s.count} ${s.signal} line(s) in the logs${sample ? `; latest ${sample.file}:${sample.line}: ${sample.text}` : ""}`,
          };
        });
        const fired = this.tracker.update(r.id, advisories, signals, now);
        if (muted.has(r.id)) continue;
        const base = `/runs/${encodeURIComponent(r.id)}`;
        for (const f of fired) {
          const sig = status.log_signals.find((s) => `log:${s.signal}` === f.rule);
          const link = sig?.last_ts != null ? this.link(`${base}/timeline?v=${Math.round(sig.last_ts - 300)}~${Math.round(sig.last_ts + 300)}`) : this.link(`${base}/timeline`);
          const alert: Alert = { run: r.name === r.id ? r.id : `${r.name} (${r.id})`, rule: f.rule, severity: f.severity, message: f.message, link, ts: now };
          this.sender.enqueue(alert);
          queued.push(alert);
        }
      } catch (err) {
        this.log(`[rlboard] alerts: run ${r.id}: ${(err as Error).message}`);
      }
    }
    return queued;
  }
}

const g = globalThis as unknown as { __rlboardAlerts?: AlertLoop | null };

/** The process's alert loop, started on first call when `serve --alert-webhook` gave URLs. */
export function ensureAlertLoop(): AlertLoop | null {
  if (g.__rlboardAlerts !== undefined) return g.__rlboardAlerts;
  const env = serverEnv();
  g.__rlboardAlerts = env.alertWebhooks.length ? new AlertLoop({ urls: env.alertWebhooks, publicUrl: env.publicUrl }) : null;
  g.__rlboardAlerts?.start();
  return g.__rlboardAlerts;
}
