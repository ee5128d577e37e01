/**
 * The server's own disk fills (#20's operator case, the brief's "disks fill"): a server
 * (re)started while its data dir's filesystem is full cannot open its database, and every
 * API request failed with a bare 500 "internal server error". It must say what is wrong
 * and what to do — 503 `storage_unavailable`, Retry-After, no path — and recover by
 * itself once space is freed. A real tmpfs, filled for real; mounting one needs root (CI
 * runs as root; collector/disk-full.test.ts does the same).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AuthError } from "next-auth";
import { encode } from "next-auth/jwt";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageFailureMessage } from "@/lib/contracts/errors";
import { forgetSessionCache, sessionSecret } from "@/lib/server/auth/session-token";
import { proxy } from "@/proxy";
import { setServerEnvForTests } from "@/lib/env";
import { createToken, addUser, findUser } from "@/lib/server/auth/users";
import { getDb } from "@/lib/server/db";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, callRoute } from "@/lib/testing/api";
import { fillDisk } from "@/lib/testing/full-disk";
import { GET as metaGET } from "./meta/route";
import { GET as runsGET } from "./runs/route";

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn("app/api/storage-full.test.ts skipped: mounting a tmpfs needs root (run the suite as root to test a real full disk)");

let mnt = "";
let mounted = false;
let b: RunBuilder;
const spare = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-spare-data-"));

beforeAll(() => {
  b = new RunBuilder().meta({ run_name: "full", start_ts: 1000, args: {} }).phases(phase("actor_train", 1000, 1010, { gpus: [0] }));
  if (!isRoot) return;
  mnt = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-full-data-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]);
  mounted = true;
});

afterAll(() => {
  setServerEnvForTests({ dataDir: spare });
  getDb(); // closes the handle on the tmpfs
  if (mounted) {
    try {
      execFileSync("umount", [mnt]);
    } catch {
      // A run context of this worker may still be writing its cache there: detach it now,
      // the kernel frees it when that write's descriptor closes.
      execFileSync("umount", ["-l", mnt]);
    }
  }
  for (const d of [mnt, spare, b.runDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

type ErrBody = { detail: string; error: { code: string; message: string } };

describe.skipIf(!isRoot)("the server's data dir on a full disk", () => {
  it("answers 503 storage_unavailable saying what to do, then recovers once space is freed", async () => {
    const dataDir = path.join(mnt, "data");
    setServerEnvForTests({ dataDir, dumpDetails: b.runDir });
    await addUser(getDb(), "ops", "password-123", "member");
    const token = createToken(getDb(), "ops");
    const row = findUser(getDb(), "ops")!;
    const jwt = await encode({ token: { name: "ops", uid: row.id, gen: row.session_gen }, secret: sessionSecret(), salt: "authjs.session-token", maxAge: 3600 });
    const cookie = `authjs.session-token=${jwt}`;
    const page = (headers: Record<string, string> = {}) => proxy(new NextRequest("http://127.0.0.1/runs/full/timeline", { headers: { cookie, accept: "text/html", ...headers } }));
    expect((await page()).headers.get("x-middleware-next")).toBe("1"); // signed in: on to the page
    expect((await callJson(metaGET, "/api/meta", { token })).status).toBe(200);

    // The server stops (its handle is closed), the disk fills, the server starts again.
    setServerEnvForTests({ dataDir: spare, dumpDetails: b.runDir });
    getDb();
    const filler = fillDisk(mnt);
    setServerEnvForTests({ dataDir, dumpDetails: b.runDir });

    for (const [handler, url] of [
      [metaGET, "/api/meta"],
      [runsGET, "/api/runs"],
    ] as const) {
      const r = await callJson<ErrBody>(handler, url, { token });
      expect(r.status, url).toBe(503);
      expect(r.body.error.code).toBe("storage_unavailable");
      expect(r.body.error.message).toMatch(/^the server cannot use its storage \(SQLITE_[A-Z_]+: [A-Za-z/ ]+\): free disk space or check the disk on the server, then retry$/);
      expect(JSON.stringify(r.body)).not.toContain(mnt);
    }

    const res = await callRoute(metaGET, "/api/meta", { token });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");

    // A person's page: the gate cannot check the session; a page saying so, not Next's bare 500.
    forgetSessionCache();
    const doc = await page();
    expect(doc.status).toBe(503);
    expect(doc.headers.get("content-type")).toContain("text/html");
    const html = await doc.text();
    expect(html).toContain("<h1>rlboard cannot use its storage</h1>");
    expect(html).toMatch(/the server cannot use its storage \(SQLITE_[A-Z_]+: [A-Za-z/ ]+\): free disk space/);
    expect(html).not.toContain(mnt);
    // The app's own navigations (RSC) get the JSON error.
    const rsc = await page({ rsc: "1" });
    expect(rsc.status).toBe(503);
    expect(((await rsc.json()) as ErrBody).error.code).toBe("storage_unavailable");

    fs.rmSync(filler);
    const back = await callJson<{ run_name: string }>(metaGET, "/api/meta", { token });
    expect(back.status).toBe(200);
    expect(back.body.run_name).toBe("full");
    expect((await page()).headers.get("x-middleware-next")).toBe("1");
  });
});

describe("storage failures, by what a person is told", () => {
  it("names SQLite's and the file system's codes, also wrapped as Auth.js wraps a sign-in's error", () => {
    const sqlite = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    expect(storageFailureMessage(sqlite)).toBe("the server cannot use its storage (SQLITE_FULL: its disk is full): free disk space or check the disk on the server, then retry");
    // Sign-in reads the user table: Auth.js hands the error back at `cause.err`, and the
    // form said "Wrong user name or password." for a full disk.
    expect(storageFailureMessage(new AuthError("Read more at https://errors.authjs.dev#callbackrouteerror", { cause: { err: sqlite } }))).toContain("(SQLITE_FULL: its disk is full)");
    expect(storageFailureMessage(Object.assign(new Error("EIO: i/o error, read '/abs/path'"), { code: "EIO" }))).toBe(
      "the server cannot use its storage (EIO: disk I/O error): free disk space or check the disk on the server, then retry",
    );
    expect(storageFailureMessage(Object.assign(new Error("x"), { code: "SQLITE_READONLY_DBMOVED" }))).toContain("its storage cannot be written");
    for (const other of [new Error("boom"), Object.assign(new Error("busy"), { code: "SQLITE_BUSY" }), Object.assign(new Error("nope"), { code: "ENOENT" }), null, "x"]) {
      expect(storageFailureMessage(other)).toBeNull();
    }
  });
});
