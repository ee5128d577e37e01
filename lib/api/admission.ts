/**
 * Admission gate for expensive queries (docs/api.md "Limits"): at most `maxRunning` heavy
 * requests run server-wide and `maxPerUser` per user; a bounded queue holds the next few
 * (at most `maxQueuedPerUser` of one user), and anything beyond — or a request that
 * waited `maxWaitMs` — is refused with 503 `busy` + `Retry-After: 1`, which the UI
 * retries (lib/client/query-client.ts).
 *
 * Heavy handlers do seconds of synchronous CPU in places (decoding partitions,
 * downsampling, serialising MB of JSON). The gate is what keeps the event loop free for
 * light requests: a released slot is handed to the next waiter with `setImmediate`, i.e.
 * after the poll phase, so requests that arrived meanwhile (/api/health, /api/meta) are
 * read and answered between two heavy runs instead of behind the whole queue.
 */
import { busy } from "@/lib/contracts/errors";

export interface GateOptions {
  maxRunning: number;
  maxPerUser: number;
  maxQueue: number;
  maxQueuedPerUser: number;
  maxWaitMs: number;
}

/** The queue is short on purpose: a refused request costs ~1 ms; a long wait looks like a hang. */
/**
 * Two at a time: JavaScript runs on one thread, so a third concurrent heavy query adds no
 * throughput — its slices only queue in front of the light requests (bench: /api/health
 * p99 under 50 clients roughly halves from 4 to 2). Two keep one query's I/O overlapping
 * another's CPU.
 */
export const DEFAULT_GATE: GateOptions = { maxRunning: 2, maxPerUser: 2, maxQueue: 16, maxQueuedPerUser: 6, maxWaitMs: 5_000 };

interface Waiter {
  user: string;
  start: (release: () => void) => void;
  timer: ReturnType<typeof setTimeout>;
}

export type Release = () => void;

export class AdmissionGate {
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  private readonly queue: Waiter[] = [];
  private pumping = false;

  constructor(readonly opts: GateOptions) {}

  /** Running / queued counts (tests, diagnostics). */
  stats(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  /** Resolves with a release function once the request may run; rejects with a busy 503. */
  acquire(user: string): Promise<Release> {
    // Jump the queue only when nobody queued could run now (they wait on their own user's limit).
    if (this.canRun(user) && !this.queue.some((w) => this.canRun(w.user))) return Promise.resolve(this.take(user));
    if (this.queue.length >= this.opts.maxQueue) return Promise.reject(this.refuse("the server is busy with other expensive queries"));
    const mine = this.queue.reduce((n, w) => n + (w.user === user ? 1 : 0), 0);
    if (mine >= this.opts.maxQueuedPerUser) {
      return Promise.reject(this.refuse("too many expensive queries from this user at once"));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        user,
        start: resolve,
        timer: setTimeout(() => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(this.refuse("an expensive query waited too long for its turn"));
        }, this.opts.maxWaitMs),
      };
      waiter.timer.unref?.();
      this.queue.push(waiter);
    });
  }

  private refuse(why: string) {
    return busy(`${why}; retry in a moment (at most ${this.opts.maxRunning} run at once, ${this.opts.maxPerUser} per user)`);
  }

  private canRun(user: string): boolean {
    return this.running < this.opts.maxRunning && (this.runningBy.get(user) ?? 0) < this.opts.maxPerUser;
  }

  private take(user: string): Release {
    this.running++;
    this.runningBy.set(user, (this.runningBy.get(user) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running--;
      const n = (this.runningBy.get(user) ?? 1) - 1;
      if (n > 0) this.runningBy.set(user, n);
      else this.runningBy.delete(user);
      this.schedulePump();
    };
  }

  private schedulePump(): void {
    if (this.pumping || this.queue.length === 0) return;
    this.pumping = true;
    setImmediate(() => {
      this.pumping = false;
      this.pump();
    });
  }

  /** Start queued requests in arrival order, skipping users at their own limit. */
  private pump(): void {
    for (let i = 0; i < this.queue.length && this.running < this.opts.maxRunning; ) {
      const w = this.queue[i]!;
      if (!this.canRun(w.user)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      clearTimeout(w.timer);
      w.start(this.take(w.user));
    }
  }
}

/** One gate per process (Next may load this module in more than one bundle). */
const KEY = Symbol.for("rlboard.heavyGate");

export function heavyGate(opts: () => GateOptions): AdmissionGate {
  const g = globalThis as unknown as Record<symbol, AdmissionGate | undefined>;
  return (g[KEY] ??= new AdmissionGate(opts()));
}

/** Tests: forget the process gate so the next `heavyGate` builds one with new options. */
export function resetHeavyGateForTests(): void {
  delete (globalThis as unknown as Record<symbol, AdmissionGate | undefined>)[KEY];
}
