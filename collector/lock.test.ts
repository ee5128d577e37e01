/**
 * The collector lock after a SIGKILL (issue #11 item 13): a dead pid must not
 * hold the lock. A process killed by SIGKILL stays a zombie until its parent
 * reaps it, and `kill(pid, 0)` still succeeds on a zombie — so here the
 * collector runs under a parent that never reaps (`sh` exec'ing `sleep`), the
 * exact window in which a restart used to be refused.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LOCK_FILE, LockError, acquireLock, pidAlive } from "./lock";
import { startCollector } from "./server";
import type { CollectorHandle } from "./server";
import { captureLog } from "./testing/capture-log";
import { waitFor } from "./testing/child-collector";

let dump: string;
let parent: ChildProcess | undefined;
let handle: CollectorHandle | undefined;
beforeAll(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-lock-"));
});
afterEach(async () => {
  await handle?.stop();
  handle = undefined;
  parent?.kill("SIGKILL");
  parent = undefined;
});
afterAll(() => rmSync(dump, { recursive: true, force: true }));

const procState = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
};

describe("collector lock", () => {
  it("a restart within 100 ms of a SIGKILL succeeds while the dead collector is still an unreaped zombie", async () => {
    const dash = join(dump, "dashboard");
    const cli = [process.execPath, "--import", "tsx", "collector/index.ts", "--dump-details", dump, "--gpu-source", "none", "--port", "0"];
    const quoted = cli.map((a) => `'${a}'`).join(" ");
    // The collector's parent becomes `sleep`, which never waits for it.
    parent = spawn("sh", ["-c", `${quoted} & echo $!; exec sleep 120`], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    parent.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    parent.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    await waitFor(() => /collector listening on/.test(err), 20_000, `the collector to start (${err})`);
    const pid = Number.parseInt(out, 10);
    expect(readFileSync(join(dash, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${pid}\\nstart \\d+\\n$`));
    expect(pidAlive(pid)).toBe(true);

    process.kill(pid, "SIGKILL");
    await waitFor(() => procState(pid) === "Z", 5_000, "the collector to die");
    const killedAt = Date.now();
    // What the old check relied on still "sees" the dead process.
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(existsSync(join(dash, LOCK_FILE))).toBe(true);

    const log = captureLog();
    handle = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log });
    const restartMs = Date.now() - killedAt;
    expect(restartMs).toBeLessThan(100);
    expect(procState(pid)).toBe("Z"); // still unreaped: the lock was judged stale, not waited out
    expect(log.messages("warn")).toContain(`took over a stale lock of pid ${pid} (${join(dash, LOCK_FILE)})`);
    expect(Number.parseInt(readFileSync(join(dash, LOCK_FILE), "utf8"), 10)).toBe(process.pid);
  }, 40_000);

  it("refuses a live owner, and takes over a lock whose pid was reused by another process", async () => {
    const dir = mkdtempSync(join(dump, "reuse-"));
    const mine = await acquireLock(dir);
    expect(mine.recoveredStalePid).toBeUndefined();
    await expect(acquireLock(dir)).rejects.toThrow(LockError);
    await expect(acquireLock(dir)).rejects.toThrow(`another collector (pid ${process.pid}) is writing ${dir}`);
    await mine.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);

    // A lock of an older collector whose pid now belongs to a different (live) process: this one.
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\nstart 1\n`);
    const taken = await acquireLock(dir);
    expect(taken.recoveredStalePid).toBe(process.pid);
    await taken.release();

    // An old-format lock (pid only) of a live process is still honoured.
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    await expect(acquireLock(dir)).rejects.toThrow(LockError);
  });
});
