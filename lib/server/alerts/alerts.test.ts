import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getDb } from "@/lib/server/db";
import { AlertLoop } from "@/lib/server/alerts";
import { advisoryRule, EpisodeTracker, LOG_QUIET_S } from "@/lib/server/alerts/episodes";
import { isMuted, setMuted } from "@/lib/server/alerts/mutes";
import { AlertSender, alertBody, type Alert } from "@/lib/server/alerts/sender";
import { setupTestServer } from "@/lib/testing/api";

/** A real local webhook receiver: records bodies; `fail` answers 500 that many times first. */
async function receiver(opts: { fail?: number; delayMs?: number } = {}) {
  const bodies: unknown[] = [];
  let failures = opts.fail ?? 0;
  let hits = 0;
  const server = http.createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => (data += c.toString()));
    req.on("end", () => {
      hits++;
      setTimeout(() => {
        if (failures > 0) {
          failures--;
          res.writeHead(500).end("nope");
          return;
        }
        bodies.push(JSON.parse(data));
        res.writeHead(200).end("ok");
      }, opts.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, bodies, hits: () => hits, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const alert = (rule = "log:oom"): Alert => ({ run: "grpo-a", rule, severity: "critical", message: "1 oom line(s)", link: "https://dash.lab/runs/grpo-a/timeline", ts: 1000 });

describe("webhook bodies", () => {
  test("Slack-compatible {text} for Slack (or #slack), generic JSON otherwise", () => {
    expect(JSON.parse(alertBody("https://hooks.slack.com/services/T/B/X", alert()))).toEqual({
      text: ":rotating_light: *grpo-a* — critical: 1 oom line(s) (<https://dash.lab/runs/grpo-a/timeline|open>)",
    });
    expect(Object.keys(JSON.parse(alertBody("http://127.0.0.1/h#slack", alert())) as object)).toEqual(["text"]);
    expect(JSON.parse(alertBody("http://127.0.0.1/h", alert()))).toEqual({
      run: "grpo-a",
      rule: "log:oom",
      severity: "critical",
      message: "1 oom line(s)",
      link: "https://dash.lab/runs/grpo-a/timeline",
      ts: 1000,
    });
  });
});

describe("AlertSender against a real HTTP receiver", () => {
  test("posts to every URL; retries a failing one with backoff until it answers", async () => {
    const ok = await receiver();
    const flaky = await receiver({ fail: 2 });
    const s = new AlertSender({ urls: [ok.url, `${flaky.url}#slack`], baseDelayMs: 20, log: () => undefined });
    s.enqueue(alert());
    await s.idle();
    expect(ok.bodies).toEqual([JSON.parse(alertBody(ok.url, alert()))]);
    expect(flaky.hits()).toBe(3);
    expect(flaky.bodies).toEqual([{ text: expect.stringContaining("*grpo-a*") as unknown }]);
    expect(s.sent).toBe(2);
    await Promise.all([ok.close(), flaky.close()]);
  });

  test("a dead webhook: enqueue never waits, it is logged once after the retries, the queue is bounded", async () => {
    const dead = await receiver();
    await dead.close(); // nothing listens there now
    const lines: string[] = [];
    const s = new AlertSender({ urls: [dead.url], baseDelayMs: 5, attempts: 3, maxQueue: 2, log: (l) => lines.push(l) });
    const t = performance.now();
    for (let i = 0; i < 10; i++) s.enqueue(alert(`r${i}`));
    expect(performance.now() - t).toBeLessThan(20);
    await s.idle();
    // the first went out at once; of the 9 queued behind it, 2 fit
    expect(s.dropped).toBe(7);
    expect(s.failed).toBe(3);
    expect(lines.filter((l) => l.includes("giving up"))).toHaveLength(3);
    expect(lines[0]).toContain("alert queue full (2)");
    expect(lines.find((l) => l.includes("giving up"))).toMatch(/alert webhook 127\.0\.0\.1:\d+: giving up on 'r0' for grpo-a after 3 attempts/);
  });
});

describe("episodes", () => {
  test("an advisory posts once per episode and re-arms when it clears; its age does not make a new rule", () => {
    const e = new EpisodeTracker();
    const stall = (age: number) => ({ rule: advisoryRule(`Phase 'rollout' has been open for ${age}s`), severity: "critical" as const, message: `open ${age}s` });
    expect(e.update("a", [stall(2000)], [], 0)).toHaveLength(1);
    expect(e.update("a", [stall(2030)], [], 30)).toEqual([]);
    expect(e.update("a", [], [], 60)).toEqual([]); // cleared
    expect(e.update("a", [stall(4000)], [], 90)).toHaveLength(1); // a new episode
    expect(e.update("b", [stall(4000)], [], 90)).toHaveLength(1); // per run
  });

  test("a log signal fires when its count grows (not for what was there at first sight), quiet LOG_QUIET_S re-arms", () => {
    const e = new EpisodeTracker();
    const sig = (count: number) => [{ signal: "oom", count, severity: "critical" as const, text: `${count} oom` }];
    expect(e.update("a", [], sig(5), 0)).toEqual([]);
    expect(e.update("a", [], sig(6), 30)).toEqual([{ rule: "log:oom", severity: "critical", message: "6 oom" }]);
    expect(e.update("a", [], sig(7), 60)).toEqual([]); // same episode
    expect(e.update("a", [], sig(7), 60 + LOG_QUIET_S + 1)).toEqual([]); // cleared by quiet
    expect(e.update("a", [], sig(8), 60 + LOG_QUIET_S + 30)).toHaveLength(1);
  });
});

describe("the alert loop over a live run", () => {
  let root: string;
  beforeAll(async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-alerts-")));
    fs.mkdirSync(path.join(root, "live-run", "dashboard"), { recursive: true });
    fs.writeFileSync(path.join(root, "live-run", "dashboard", "meta.json"), JSON.stringify({ run_name: "live", start_ts: Date.now() / 1000, args: {}, schema_version: 1 }));
    fs.mkdirSync(path.join(root, "live-run", "logs"));
    fs.writeFileSync(path.join(root, "live-run", "logs", "train.log"), "step 1\n");
    await setupTestServer({ runsRoots: [root], publicUrl: "https://dash.lab" });
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test("a new OOM line posts one alert linking to its time; muted runs post nothing", async () => {
    const rx = await receiver();
    const loop = new AlertLoop({ urls: [rx.url], publicUrl: "https://dash.lab", log: () => undefined });
    expect(await loop.tick()).toEqual([]);
    const ts = Date.UTC(2026, 11, 1, 22, 3, 4) / 1000;
    fs.appendFileSync(path.join(root, "live-run", "logs", "train.log"), "[2026-12-01 22:03:04] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    const fired = await loop.tick();
    expect(fired.map((a) => a.rule)).toEqual(["log:oom"]);
    await loop.sender.idle();
    expect(rx.bodies).toEqual([
      {
        run: "live (live-run)",
        rule: "log:oom",
        severity: "critical",
        message: "1 oom line(s) in the logs; latest logs/train.log:2: [2026-12-01 22:03:04] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        link: `https://dash.lab/runs/live-run/timeline?v=${ts - 300}~${ts + 300}`,
        ts: expect.any(Number) as unknown,
      },
    ]);
    expect(await loop.tick()).toEqual([]); // same episode

    setMuted(getDb(), "live-run", true, "tester");
    expect(isMuted(getDb(), "live-run")).toBe(true);
    fs.appendFileSync(path.join(root, "live-run", "logs", "train.log"), "Traceback (most recent call last):\n");
    expect(await loop.tick()).toEqual([]); // crash fired, but the run is muted
    setMuted(getDb(), "live-run", false, "tester");
    expect(isMuted(getDb(), "live-run")).toBe(false);
    await rx.close();
  });
});
