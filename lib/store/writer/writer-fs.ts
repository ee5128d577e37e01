/**
 * The few filesystem calls the writer makes, behind an interface so tests can
 * inject failures (EIO, ENOSPC) without needing a read-only mount — and so
 * the rest of the writer never imports `node:fs` directly.
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";

/** Subset of `fs.promises.FileHandle` used by the appender. */
export interface WriterFileHandle {
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  truncate(len: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface WriterFs {
  /** Open for appending (O_APPEND | O_CREAT, read access for tail checks). */
  openAppend(path: string): Promise<WriterFileHandle>;
  mkdir(path: string): Promise<void>;
  writeFile(path: string, data: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** File contents, or `undefined` when it does not exist. */
  readFileIfExists(path: string): Promise<string | undefined>;
}

export const nodeWriterFs: WriterFs = {
  openAppend: (path) => fsp.open(path, constants.O_APPEND | constants.O_CREAT | constants.O_RDWR, 0o644),
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  writeFile: (path, data) => fsp.writeFile(path, data),
  rename: (from, to) => fsp.rename(from, to),
  readFileIfExists: async (path) => {
    try {
      return await fsp.readFile(path, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  },
};
