import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { openDatabase, type Db } from "@/lib/server/db";

const open: { db: Db; dir: string }[] = [];
function fresh(): Db {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-db-"));
  const db = openDatabase(dir);
  open.push({ db, dir });
  return db;
}
afterEach(() => {
  for (const { db, dir } of open.splice(0)) {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe("openDatabase keeps compiled statements", () => {
  test("the same SQL text gives the same statement, which answers from the current rows", () => {
    const db = fresh();
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
    const sql = "SELECT v FROM t WHERE k = ?";
    const st = db.prepare(sql);
    expect(db.prepare(sql)).toBe(st);
    expect(db.prepare("SELECT k FROM t")).not.toBe(st);
    expect(db.prepare(sql).get("a")).toBeUndefined();
    db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run("a", 1);
    db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run("b", 2);
    expect(db.prepare(sql).get("a")).toEqual({ v: 1 });
    expect(db.prepare(sql).get("b")).toEqual({ v: 2 });
  });

  test("a kept statement still works after the schema changes under it", () => {
    const db = fresh();
    db.exec("CREATE TABLE t (k TEXT, v INTEGER)");
    db.prepare("INSERT INTO t (k, v) VALUES (?, ?)").run("a", 1);
    const sql = "SELECT * FROM t WHERE k = ?";
    expect(db.prepare(sql).get("a")).toEqual({ k: "a", v: 1 });
    db.exec("ALTER TABLE t ADD COLUMN note TEXT DEFAULT 'x'");
    expect(db.prepare(sql).get("a")).toEqual({ k: "a", v: 1, note: "x" });
  });

  test("two handles on one data dir keep their own statements", () => {
    const db = fresh();
    const dir = open[0]!.dir;
    const other = openDatabase(dir);
    try {
      expect(other.prepare("SELECT 1 AS one")).not.toBe(db.prepare("SELECT 1 AS one"));
      expect(other.prepare("SELECT 1 AS one").get()).toEqual({ one: 1 });
    } finally {
      other.close();
    }
  });
});
