/**
 * The one SQLite handle (better-sqlite3, WAL) in the data dir, and the migration runner.
 * Schema lives as plain SQL in prisma/migrations (applied in order, each in a transaction,
 * recorded in schema_migrations). Used by the web process and by the CLI; in the web
 * process it is a globalThis singleton so dev-mode reloads don't leak handles.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { serverEnv } from "@/lib/env";

export type Db = Database.Database;

export const DB_FILE = "rlboard.db";

export function migrationsDir(): string {
  return path.join(process.cwd(), "prisma", "migrations");
}

export function applyMigrations(db: Db, dir = migrationsDir()): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)`);
  const applied = new Set(
    (db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map((r) => r.version),
  );
  // Runtime paths (the migrations folder, the data dir) are not build inputs: the
  // `turbopackIgnore` comments keep Next's file tracer from pulling in the whole project.
  const files = fs
    .readdirSync(/* turbopackIgnore: true */ dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const ran: string[] = [];
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = fs.readFileSync(/* turbopackIgnore: true */ path.join(/* turbopackIgnore: true */ dir, file), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        version,
        file,
        Date.now() / 1000,
      );
    })();
    ran.push(file);
  }
  return ran;
}

/**
 * The database holds password hashes, token hashes and the audit: only the server's user
 * may read it. The file is created (or tightened) to 0600 before SQLite opens it; SQLite
 * gives the -wal and -shm files the mode of the database file. A data dir we create is 0700.
 */
function createPrivate(file: string): void {
  fs.closeSync(fs.openSync(file, "a", 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((fs.statSync(/* turbopackIgnore: true */ f).mode & 0o077) !== 0) fs.chmodSync(f, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

export function openDatabase(dataDir: string): Db {
  if (!fs.existsSync(dataDir)) fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, DB_FILE);
  createPrivate(file);
  const db = new Database(file);
  keepStatements(db);
  db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  applyMigrations(db);
  return db;
}

/** Bound on kept statements; every caller passes literal SQL, so it is never reached in practice. */
const KEPT_STATEMENTS = 256;

/**
 * Make `db.prepare` return the statement it compiled before for the same SQL text. Every
 * API request runs the same few statements (token lookup, run access, the audit insert),
 * and compiling them again cost ~0.15 ms each of a ~6 ms warm request (#20). Safe because
 * no caller keeps a statement iterating or changes its mode (pluck, raw, expand).
 */
function keepStatements(db: Db): void {
  const compile = db.prepare.bind(db);
  const kept = new Map<string, Database.Statement>();
  db.prepare = ((source: string) => {
    let st = kept.get(source);
    if (st === undefined) {
      st = compile(source);
      if (kept.size >= KEPT_STATEMENTS) kept.clear();
      kept.set(source, st);
    }
    return st;
  }) as Db["prepare"];
}

const g = globalThis as unknown as { __rlboardDb?: { dir: string; db: Db } };

/** The web process's handle, opened on first use in the configured data dir. */
export function getDb(): Db {
  const dir = serverEnv().dataDir;
  if (!g.__rlboardDb || g.__rlboardDb.dir !== dir) {
    g.__rlboardDb?.db.close();
    g.__rlboardDb = { dir, db: openDatabase(dir) };
  }
  return g.__rlboardDb.db;
}
