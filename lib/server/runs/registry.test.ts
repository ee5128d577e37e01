import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/server/db";
import { MIN_RESCAN_MS, RunRegistry } from "@/lib/server/runs/registry";
import { decodeRunId, encodeRunId } from "@/lib/server/runs/run-id";
import { scanRoot } from "@/lib/server/runs/scan";

function tmp(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function makeRun(dir: string, kind: "dashboard" | "rollout_data", meta?: object): void {
  fs.mkdirSync(path.join(dir, kind), { recursive: true });
  if (meta) fs.writeFileSync(path.join(dir, "dashboard", "meta.json"), JSON.stringify(meta));
  if (kind === "rollout_data") fs.writeFileSync(path.join(dir, "rollout_data", "0.pt"), "");
}

describe("run ids", () => {
  it("round-trips nested paths and odd characters, and is URL-safe", () => {
    for (const rel of ["a", "sweep/run-1", "x y/€~z", "deep/er/still"]) {
      const id = encodeRunId(rel);
      expect(id).not.toContain("/");
      expect(encodeURIComponent(id)).toBe(id.replace(/%/g, "%25"));
      expect(decodeRunId(id)).toBe(rel);
    }
  });
  it("rejects ids that could leave a root", () => {
    for (const bad of ["..", "a~..", ".", "", "a~~b", "%2e%2e", "a%2Fb", "%00", "%E0%A4%A"]) expect(decodeRunId(bad)).toBeNull();
  });
});

describe("run scan", () => {
  it("finds runs at any depth, names them from meta.json, and does not descend into runs", () => {
    const root = tmp("rlboard-root-");
    makeRun(path.join(root, "alpha"), "dashboard", { run_name: "Alpha GRPO", start_ts: 100.5 });
    makeRun(path.join(root, "sweep", "b1"), "rollout_data");
    makeRun(path.join(root, "sweep", "b2"), "dashboard");
    fs.mkdirSync(path.join(root, "sweep", "b2", "dashboard", "phases"));
    fs.writeFileSync(path.join(root, "sweep", "b2", "dashboard", "phases", "19700112_13.jsonl"), "{}\n");
    // A run inside another run's content folder is not a separate run.
    makeRun(path.join(root, "alpha", "dashboard", "nested"), "dashboard");
    fs.mkdirSync(path.join(root, "empty", "nothing"), { recursive: true });

    const runs = scanRoot(root).sort((a, b) => a.id.localeCompare(b.id));
    expect(runs.map((r) => r.id)).toEqual(["alpha", "sweep~b1", "sweep~b2"]);
    const alpha = runs[0]!;
    expect(alpha.name).toBe("Alpha GRPO");
    expect(alpha.firstTs).toBe(100.5);
    expect(runs[1]).toMatchObject({ name: "b1", hasDumps: true, steps: 1, hasTimeline: false });
    expect(runs[2]).toMatchObject({ hasTimeline: true, hasDumps: false, live: true });
  });

  it("follows symlinks inside the root and ignores those escaping it", () => {
    const root = tmp("rlboard-root-");
    const outside = tmp("rlboard-outside-");
    makeRun(path.join(outside, "secret"), "dashboard");
    makeRun(path.join(root, "real"), "dashboard");
    fs.symlinkSync(path.join(outside, "secret"), path.join(root, "escape"));
    fs.symlinkSync(outside, path.join(root, "escape-dir"));
    fs.symlinkSync(path.join(root, "real"), path.join(root, "alias"));
    const ids = scanRoot(root).map((r) => r.id).sort();
    expect(ids).toEqual(["alias", "real"]);
    // The scan reports both paths; the registry keeps one id per real directory.
    expect(scanRoot(root).find((r) => r.id === "alias")?.realDir).toBe(path.join(root, "real"));
  });

  it("half-written meta.json falls back to the folder name", () => {
    const root = tmp("rlboard-root-");
    makeRun(path.join(root, "r"), "dashboard");
    fs.writeFileSync(path.join(root, "r", "dashboard", "meta.json"), '{"run_name": "par');
    expect(scanRoot(root)[0]?.name).toBe("r");
  });
});

describe("RunRegistry", () => {
  it("indexes runs in SQLite, drops vanished ones, and finds runs created after the last scan", () => {
    const root = tmp("rlboard-root-");
    const db = openDatabase(tmp("rlboard-data-"));
    makeRun(path.join(root, "one"), "dashboard");
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    expect(reg.list().map((r) => r.id)).toEqual(["one"]);
    expect(db.prepare("SELECT id, name FROM runs").all()).toEqual([{ id: "one", name: "one" }]);
    makeRun(path.join(root, "two"), "rollout_data");
    // A run created since the last scan is found at once, by its path alone (no rescan).
    expect(reg.find("two")?.relPath).toBe("two");
    fs.rmSync(path.join(root, "one"), { recursive: true });
    reg.list({ refresh: true });
    expect((db.prepare("SELECT id FROM runs").all() as { id: string }[]).map((r) => r.id)).toEqual(["two"]);
    expect(reg.find("one")).toBeNull();
    expect(reg.find("..")).toBeNull();
    db.close();
  });

  it("single-run mode exposes exactly the one directory", () => {
    const dir = path.join(tmp("rlboard-single-"), "my-run");
    makeRun(dir, "dashboard", { run_name: "solo" });
    const reg = new RunRegistry(openDatabase(tmp("rlboard-data-")), { kind: "single", dir });
    expect(reg.single()).toMatchObject({ id: "my-run", name: "solo", dir });
  });
});

describe("symlinked aliases and rescans (#11 items 3b, 9)", () => {
  it("lists a directory reachable through a symlink once, under its real id", () => {
    const root = tmp("rlboard-alias-");
    makeRun(path.join(root, "secret-run"), "dashboard", { run_name: "Secret" });
    fs.symlinkSync(path.join(root, "secret-run"), path.join(root, "alias"));
    fs.mkdirSync(path.join(root, "team"));
    fs.symlinkSync(path.join(root, "secret-run"), path.join(root, "team", "zzz"));
    const db = openDatabase(tmp("rlboard-alias-db-"));
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    expect(reg.list().map((r) => r.id)).toEqual(["secret-run"]);
    expect(reg.find("alias")).toBeNull();
    expect(reg.find("team~zzz")).toBeNull();
    expect(reg.find("secret-run")?.realDir).toBe(path.join(root, "secret-run"));
    db.close();
  });

  it("an alias-only directory (the real one outside any scanned path) keeps one id", () => {
    const root = tmp("rlboard-alias2-");
    makeRun(path.join(root, ".hidden", "real"), "dashboard");
    fs.symlinkSync(path.join(root, ".hidden", "real"), path.join(root, "b-link"));
    fs.symlinkSync(path.join(root, ".hidden", "real"), path.join(root, "a-link"));
    const db = openDatabase(tmp("rlboard-alias2-db-"));
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    expect(reg.list().map((r) => r.id)).toEqual(["a-link"]);
    db.close();
  });

  it("a directory swapped for a symlink after the scan is not served under the old id", () => {
    const root = tmp("rlboard-swap-");
    makeRun(path.join(root, "r1"), "dashboard");
    makeRun(path.join(root, "other"), "dashboard");
    const db = openDatabase(tmp("rlboard-swap-db-"));
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    expect(reg.find("r1")).not.toBeNull();
    fs.rmSync(path.join(root, "r1"), { recursive: true });
    fs.symlinkSync(path.join(root, "other"), path.join(root, "r1"));
    expect(reg.find("r1")).toBeNull();
    db.close();
  });

  it("an unknown id is looked up by the scan's rules: no hidden or content folder, no run inside a run, no alias", () => {
    const root = tmp("rlboard-lookup-");
    makeRun(path.join(root, "a"), "dashboard");
    const db = openDatabase(tmp("rlboard-lookup-db-"));
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    expect(reg.list().map((r) => r.id)).toEqual(["a"]);
    makeRun(path.join(root, ".hidden"), "dashboard");
    makeRun(path.join(root, "a", "nested"), "dashboard");
    makeRun(path.join(root, "b", "dashboard", "x"), "dashboard");
    fs.symlinkSync(path.join(root, "a"), path.join(root, "alias-now"));
    makeRun(path.join(root, "sweep", "new"), "dashboard");
    expect(reg.find(".hidden")).toBeNull();
    expect(reg.find("a~nested")).toBeNull();
    expect(reg.find("b~dashboard~x")).toBeNull();
    expect(reg.find("alias-now")).toBeNull();
    expect(reg.find("sweep~new")?.relPath).toBe("sweep/new");
    db.close();
  });

  it("a flood of unknown ids rescans at most once per MIN_RESCAN_MS", () => {
    const root = tmp("rlboard-flood-");
    makeRun(path.join(root, "a"), "dashboard");
    const db = openDatabase(tmp("rlboard-flood-db-"));
    const reg = new RunRegistry(db, { kind: "multi", roots: [root] });
    let scans = 0;
    const scan = reg.scan.bind(reg);
    reg.scan = (nowMs?: number) => {
      scans++;
      return scan(nowMs);
    };
    reg.list();
    expect(scans).toBe(1);
    for (let i = 0; i < 500; i++) expect(reg.find(`nope-${i}`)).toBeNull();
    expect(scans).toBe(1);
    expect(MIN_RESCAN_MS).toBeLessThanOrEqual(5000);
    db.close();
  });
});
