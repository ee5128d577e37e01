/**
 * Collector logging: one line per event on stderr (`ISO-time LEVEL message`),
 * errors with their stack, and a rate-limited warner for background loops.
 *
 * Policy (docs/formats.md §6.7): a background source lets the first warning of a
 * kind through and suppresses repeats for 300 s, noting the suppression. We
 * key the suppression per warning kind (e.g. per engine address) so one
 * failing engine does not mask another. Write failures and drops are never
 * rate-limited: they go through `Logger.error` directly.
 */
import { format } from "node:util";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go (default: process.stderr). */
  write?: (line: string) => void;
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return format("%o", err);
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = LOG_LEVELS.indexOf(opts.level ?? "info");
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const emit = (level: LogLevel, message: string, err?: unknown): void => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const tail = err === undefined ? "" : `: ${describeError(err)}`;
    write(`${new Date().toISOString()} ${level.toUpperCase()} ${message}${tail}\n`);
  };
  return {
    debug: (m) => emit("debug", m),
    info: (m) => emit("info", m),
    warn: (m) => emit("warn", m),
    error: (m, e) => emit("error", m, e),
  };
}

export const SUPPRESS_SECONDS = 300;

/** Lets the first warning per key through, then suppresses that key for `windowMs`. */
export class RateLimitedWarner {
  private readonly until = new Map<string, number>();
  private readonly suppressed = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    private readonly windowMs = SUPPRESS_SECONDS * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  warn(key: string, message: string): void {
    const t = this.now();
    const until = this.until.get(key);
    if (until !== undefined && t < until) {
      this.suppressed.set(key, (this.suppressed.get(key) ?? 0) + 1);
      return;
    }
    const skipped = this.suppressed.get(key) ?? 0;
    this.suppressed.delete(key);
    if (this.until.size > 10_000) this.until.clear(); // keys are addresses; bound anyway
    this.until.set(key, t + this.windowMs);
    const prior = skipped ? ` (${skipped} similar warnings were suppressed)` : "";
    this.log.warn(`${message}${prior} (further warnings of this kind suppressed for ${this.windowMs / 1000} s)`);
  }

  /** Forget a key, e.g. when an engine recovers, so its next failure is reported at once. */
  reset(key: string): void {
    this.until.delete(key);
    this.suppressed.delete(key);
  }
}
