/**
 * SGLang scraper (docs/formats.md §6.5): every tick, fetch engine metrics and hand
 * `engine_series` records to the sink.
 *
 *   - direct mode: `GET {addr}/metrics` for each engine address (static
 *     `--engines` plus the latest topology), at most 8 at a time;
 *   - router mode: one `GET {router}/engine_metrics`, engine = `worker_addr`.
 *
 * Re-pointing (`setRouter`, `POST /v1/router`): the router can restart on a
 * new address mid-run; the next tick scrapes the new one. Registering the
 * same address and mode again is a no-op (docs/formats.md §6.5). In direct
 * mode a registered router address is only remembered unless the caller
 * asks for router mode explicitly.
 *
 * Failure policy: a failing, non-2xx, unparsable or slow engine (5 s timeout)
 * is skipped for that tick with a rate-limited warning — a gap, never an
 * interpolated value. Ticks run on a fixed cadence (`interval`, at least
 * 0.5 s apart) and never wait on a slow engine: an engine whose previous
 * request is still in flight is skipped for the new tick, while the others are
 * scraped. Every record of a tick carries the tick's start time, even when
 * its engine answers late within the timeout.
 */
import type { EngineSample } from "@/lib/store/format";
import { httpFetch } from "../http-client";
import type { Logger } from "../log";
import { RateLimitedWarner } from "../log";
import { buildEngineRecords } from "./sglang-records";

export const MIN_TICK_GAP_S = 0.5;
export const DIRECT_CONCURRENCY = 8;

export type ScrapeMode = "router" | "direct";

export interface ScraperOptions {
  /** Router base URL → router mode; otherwise direct mode over `targets()`. */
  router?: string;
  /** Engine base URLs for direct mode, re-read every tick. */
  targets: () => readonly string[];
  intervalS: number;
  timeoutS: number;
  whitelist: readonly string[];
  sink: (records: EngineSample[]) => void;
  log: Logger;
  /** Wall clock in epoch seconds (injectable for tests). */
  now?: () => number;
}

function stripSlash(u: string): string {
  return u.endsWith("/") ? u.slice(0, -1) : u;
}

export class SglangScraper {
  private readonly whitelist: ReadonlySet<string>;
  private readonly warner: RateLimitedWarner;
  private readonly inFlight = new Set<string>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private active = 0;
  private readonly waiters: (() => void)[] = [];
  private readonly pendingTicks = new Set<Promise<void>>();
  private routerUrl: string | undefined;
  private currentMode: ScrapeMode;

  constructor(private readonly opts: ScraperOptions) {
    this.routerUrl = opts.router === undefined ? undefined : stripSlash(opts.router);
    this.currentMode = opts.router ? "router" : "direct";
    this.whitelist = new Set(opts.whitelist);
    this.warner = new RateLimitedWarner(opts.log);
    this.now = opts.now ?? (() => Date.now() / 1000);
  }

  get mode(): ScrapeMode {
    return this.currentMode;
  }

  /** The last registered router address (scraped only in router mode). */
  get router(): string | undefined {
    return this.routerUrl;
  }

  /**
   * Register the router at `url`; `mode` (default: keep the current mode)
   * switches between router and direct scraping. Takes effect at the next
   * tick; a request in flight to the old address finishes (or times out) on
   * its own. Returns whether anything changed.
   */
  setRouter(url: string, mode: ScrapeMode = this.currentMode): boolean {
    const next = stripSlash(url);
    if (next === this.routerUrl && mode === this.currentMode) return false;
    this.routerUrl = next;
    this.currentMode = mode;
    return true;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = (): void => {
      if (!this.running) return;
      const started = Date.now();
      const p = this.tick();
      this.pendingTicks.add(p);
      void p.finally(() => this.pendingTicks.delete(p));
      const gap = Math.max(MIN_TICK_GAP_S * 1000, this.opts.intervalS * 1000 - (Date.now() - started));
      this.timer = setTimeout(loop, gap);
    };
    loop();
  }

  /** Stop ticking and wait for requests in flight (bounded by the timeout). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.pendingTicks]);
  }

  /** One tick; resolves when every request of the tick has settled. */
  async tick(): Promise<void> {
    const ts = this.now();
    if (this.currentMode === "router" && this.routerUrl !== undefined) {
      await this.scrapeOne(`${this.routerUrl}/engine_metrics`, ts, undefined);
      return;
    }
    const targets = [...new Set(this.opts.targets().map(stripSlash))];
    await Promise.all(targets.map((addr) => this.scrapeOne(`${addr}/metrics`, ts, addr)));
  }

  private async acquire(): Promise<void> {
    if (this.active < DIRECT_CONCURRENCY) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
  }

  private async scrapeOne(url: string, ts: number, addr: string | undefined): Promise<void> {
    if (this.inFlight.has(url)) {
      this.warner.warn(url, `sglang scrape of ${url} skipped: the previous request is still running (gap in engine_series)`);
      return;
    }
    this.inFlight.add(url);
    await this.acquire();
    try {
      const res = await httpFetch(url, { timeoutMs: this.opts.timeoutS * 1000 });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = res.text;
      const { records, missingAddr } = buildEngineRecords(text, { ts, addr, whitelist: this.whitelist });
      if (missingAddr > 0) {
        this.warner.warn(`${url}#worker_addr`, `${url}: dropped ${missingAddr} samples without a worker_addr label`);
      }
      if (records.length > 0) this.opts.sink(records);
    } catch (e) {
      this.warner.warn(url, `sglang scrape of ${url} failed: ${this.describe(e)} (gap in engine_series)`);
    } finally {
      this.release();
      this.inFlight.delete(url);
    }
  }

  private describe(e: unknown): string {
    if (!(e instanceof Error)) return String(e);
    if (e.name === "TimeoutError") return `timed out after ${this.opts.timeoutS} s`;
    return e.message; // node:http errors name the cause, e.g. "connect ECONNREFUSED 10.0.0.1:15000"
  }
}
