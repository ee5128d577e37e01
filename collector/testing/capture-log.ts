/** Test helper: a Logger that records lines instead of printing them. */
import type { Logger } from "../log";

export interface CapturedLog extends Logger {
  lines: { level: string; message: string }[];
  messages(level: string): string[];
}

export function captureLog(): CapturedLog {
  const lines: { level: string; message: string }[] = [];
  const push = (level: string) => (message: string, err?: unknown) =>
    lines.push({ level, message: err instanceof Error ? `${message}: ${err.message}` : message });
  return {
    lines,
    messages: (level) => lines.filter((l) => l.level === level).map((l) => l.message),
    debug: push("debug"),
    info: push("info"),
    warn: push("warn"),
    error: push("error"),
  };
}
