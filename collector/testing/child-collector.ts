/**
 * Test helper: run the real CLI as a child process — from source
 * (`node --import tsx collector/index.ts …`, the default) or as shipped
 * (`sh collector/launch.sh …`, what `npm run collector` runs: the bundle).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";

export interface ChildCollector {
  url: string;
  proc: ChildProcess;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The CLI from source, through tsx. */
export const CLI_SOURCE: readonly string[] = [process.execPath, "--import", "tsx", "collector/index.ts"];
/** The CLI as `npm run collector` starts it: build-if-stale, then exec node on collector/dist/collector.mjs. */
export const CLI_LAUNCHER: readonly string[] = ["sh", "collector/launch.sh"];

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  command: readonly string[] = CLI_SOURCE,
): { proc: ChildProcess; stderr(): string; exited: ChildCollector["exited"] } {
  const [cmd, ...pre] = command;
  const proc = spawn(cmd!, [...pre, ...args], {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  proc.stdout?.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("close", (code, signal) => resolve({ code, signal })),
  );
  return { proc, stderr: () => err, exited };
}

export async function spawnCollector(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 20_000,
  command: readonly string[] = CLI_SOURCE,
): Promise<ChildCollector> {
  const c = runCli(["--port", "0", ...args], env, command);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = /collector listening on (http:\/\/[^,\s]+)/.exec(c.stderr());
    if (m?.[1]) return { ...c, url: m[1] };
    if (c.proc.exitCode !== null) throw new Error(`collector exited early:\n${c.stderr()}`);
    if (Date.now() > end) {
      c.proc.kill("SIGKILL");
      throw new Error(`collector did not start:\n${c.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
