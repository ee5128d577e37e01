/**
 * The few filesystem calls the writer makes, behind an interface so tests can
 * inject failures (EIO, ENOSPC) without needing a read-only mount — and so
 * the rest of the writer never imports `node:fs` directly.
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";

/** Subset of `fs.promises.FileHandle` used by the appender. */
export interface WriterFileHandle {
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number; mtimeMs: number }>;
  truncate(len: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface WriterFs {
  /** Open for appending (O_APPEND | O_CREAT, read access for tail checks). */
  openAppend(path: string): Promise<WriterFileHandle>;
  /** Open an existing file read-only (the phase hour index reads the hours it describes). */
  openRead(path: string): Promise<WriterFileHandle>;
  mkdir(path: string): Promise<void>;
  writeFile(path: string, data: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** File contents, or `undefined` when it does not exist. */
  readFileIfExists(path: string): Promise<string | undefined>;
  /** Entry names of a directory, or `undefined` when it does not exist. */
  listDir(path: string): Promise<string[] | undefined>;
  /**
   * Call `onLine` for every complete line of a file, in order, reading it in
   * chunks (files may be far larger than memory); bytes after the last `\n`
   * are ignored, like every reader does. Returns false when it does not exist.
   */
  forEachLine(path: string, onLine: (line: string) => void): Promise<boolean>;
}

/** Replace `path` with `text` so a reader never sees half a file: write `path.tmp`, rename it over. */
export async function replaceFile(fs: WriterFs, path: string, text: string): Promise<void> {
  await fs.writeFile(`${path}.tmp`, text);
  await fs.rename(`${path}.tmp`, path);
}

const LINE_CHUNK = 1 << 20;

async function forEachLine(path: string, onLine: (line: string) => void): Promise<boolean> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  try {
    const buf = Buffer.allocUnsafe(LINE_CHUNK);
    const decoder = new StringDecoder("utf8"); // a chunk may end inside a character
    let carry = "";
    let pos = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, LINE_CHUNK, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const text = carry + decoder.write(buf.subarray(0, bytesRead));
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        onLine(text.slice(start, nl));
        start = nl + 1;
      }
      carry = text.slice(start);
    }
    return true;
  } finally {
    await fh.close();
  }
}

export const nodeWriterFs: WriterFs = {
  openAppend: (path) => fsp.open(path, constants.O_APPEND | constants.O_CREAT | constants.O_RDWR, 0o644),
  openRead: (path) => fsp.open(path, constants.O_RDONLY),
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
  listDir: async (path) => {
    try {
      return await fsp.readdir(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  },
  forEachLine,
};
