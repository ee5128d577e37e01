/**
 * Webhook delivery (docs/api.md 9.5.5): a bounded in-memory queue drained by one
 * background worker — posting never runs on a request's path. Each alert goes to every
 * URL; a failure (network error, timeout, non-2xx) is retried with exponential backoff,
 * then dropped with one log line. A full queue drops its oldest alert (counted).
 *
 * Body: Slack-compatible `{"text": …}` for Slack incoming webhooks (host `*.slack.com`, or
 * any URL ending in `#slack`), else generic JSON `{run, rule, severity, message, link, ts}`
 * (`#generic` forces it). The fragment is never sent.
 */
export interface Alert {
  run: string;
  rule: string;
  severity: "critical" | "warning" | "info";
  message: string;
  /** Absolute URL of the run's page (or a path when no public URL is known). */
  link: string;
  ts: number;
}

export interface SenderOptions {
  urls: readonly string[];
  maxQueue?: number;
  attempts?: number;
  baseDelayMs?: number;
  timeoutMs?: number;
  log?: (line: string) => void;
}

export function isSlack(url: string): boolean {
  const u = new URL(url);
  if (u.hash === "#slack") return true;
  if (u.hash === "#generic") return false;
  return u.hostname === "slack.com" || u.hostname.endsWith(".slack.com");
}

export function alertBody(url: string, a: Alert): string {
  if (isSlack(url)) {
    const icon = a.severity === "critical" ? ":rotating_light:" : a.severity === "warning" ? ":warning:" : ":information_source:";
    return JSON.stringify({ text: `${icon} *${a.run}* — ${a.severity}: ${a.message} (<${a.link}|open>)` });
  }
  return JSON.stringify({ run: a.run, rule: a.rule, severity: a.severity, message: a.message, link: a.link, ts: a.ts });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class AlertSender {
  private readonly queue: Alert[] = [];
  private draining: Promise<void> | null = null;
  dropped = 0;
  sent = 0;
  failed = 0;
  private readonly maxQueue: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;

  constructor(private readonly opts: SenderOptions) {
    this.maxQueue = opts.maxQueue ?? 256;
    this.attempts = opts.attempts ?? 5;
    this.baseDelayMs = opts.baseDelayMs ?? 1000;
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.log = opts.log ?? ((l) => console.warn(l));
  }

  /** Queue an alert (never waits). */
  enqueue(a: Alert): void {
    this.queue.push(a);
    if (this.queue.length > this.maxQueue) {
      this.queue.shift();
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 100 === 0) this.log(`[rlboard] alert queue full (${this.maxQueue}): dropped ${this.dropped} alert(s) so far`);
    }
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
  }

  /** Resolves when the queue is empty (tests). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let a = this.queue.shift(); a; a = this.queue.shift()) {
      const alert = a;
      await Promise.all(this.opts.urls.map((u) => this.post(u, alert)));
    }
  }

  private async post(url: string, a: Alert): Promise<void> {
    const target = url.replace(/#.*$/, "");
    let last = "";
    for (let i = 0; i < this.attempts; i++) {
      if (i > 0) await sleep(this.baseDelayMs * 2 ** (i - 1));
      try {
        const res = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: alertBody(url, a),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          this.sent++;
          return;
        }
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).name === "TimeoutError" ? `no answer in ${this.timeoutMs} ms` : (err as Error).message;
      }
    }
    this.failed++;
    const host = (() => {
      try {
        return new URL(target).host;
      } catch {
        return "?";
      }
    })();
    this.log(`[rlboard] alert webhook ${host}: giving up on '${a.rule}' for ${a.run} after ${this.attempts} attempts (${last})`);
  }
}
