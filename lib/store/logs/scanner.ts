/**
 * Incremental log scanner (docs/api.md 9.5.1): reads each log file by byte offset in
 * fixed-size chunks, so a multi-GB file costs one pass and a rescan reads only what was
 * appended. What it keeps is bounded by the number of signals and files, never by the
 * size of a file:
 *  - per file: the offset after the last complete line, the line number there, inode and
 *    mtime (a partial last line is not kept: the next scan reads it again from its start;
 *    within one scan a line cut by a chunk's end is carried to the front of the next read);
 *  - per signal: count, first/last timestamp, the 3 most recent sample lines (each cut to
 *    `SAMPLE_CHARS`).
 * A line's timestamp is the one it carries (signals.ts parseLineTs), else the nearest
 * earlier stamped line's (a traceback's lines have none), else the file's mtime.
 * A line longer than one chunk is judged on its first chunk and the rest skipped to its
 * newline. A file that shrank or was replaced (other inode) is read again from byte 0;
 * its earlier matches stay counted.
 */
import type { FileHandle } from "node:fs/promises";
import { ANY_SIGNAL, classifyLine, LOG_SIGNALS, parseLineTs, type LogSignalName } from "@/lib/store/logs/signals";

export const CHUNK_BYTES = 1 << 20;
export const MAX_SAMPLES = 3;
export const SAMPLE_CHARS = 400;

export interface SignalSample {
  file: string;
  line: number;
  text: string;
}

export interface SignalState {
  signal: LogSignalName;
  count: number;
  first_ts: number | null;
  last_ts: number | null;
  samples: SignalSample[];
}

interface FileState {
  offset: number;
  /** 1-based number of the line starting at `offset`. */
  line: number;
  ino: number;
  /** Inside an over-long line: skip to the next newline first. */
  skipping: boolean;
  /** The last timestamp seen on a line before `offset` (for lines that carry none). */
  lastTs: number | null;
}

/** A file to scan: its name as shown (relative, `/`-separated) and how to open it. */
export interface LogSource {
  name: string;
  open(): Promise<FileHandle>;
}

export interface ScanStats {
  files: number;
  bytesRead: number;
}

/**
 * Where a line carries a timestamp parseLineTs reads (ISO-like date and time anywhere in
 * its head, glog or syslog at its start) — run over a chunk to find the nearest earlier
 * stamp of a line without one (a traceback's lines have none, the log line before it does).
 */
const STAMP = /\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}|^[IWEF]\d{4} \d{2}:\d{2}:\d{2}|^\[?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2} \d{2}:\d{2}:\d{2}/gim;

function emptySignal(signal: LogSignalName): SignalState {
  return { signal, count: 0, first_ts: null, last_ts: null, samples: [] };
}

export class LogScanner {
  private readonly files = new Map<string, FileState>();
  private readonly signals = new Map<LogSignalName, SignalState>(LOG_SIGNALS.map((s) => [s, emptySignal(s)]));
  /** Newest mtime (unix s) of any scanned file. */
  lastModified: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  /** Called for every match as it is counted (the collector's tailer forwards them). */
  onMatch: ((signal: LogSignalName, sample: SignalSample, ts: number) => void) | null = null;

  constructor(readonly chunkBytes = CHUNK_BYTES) {}

  /** Scan every source (serialised with any scan already running on this scanner). */
  scan(sources: readonly LogSource[]): Promise<ScanStats> {
    const run = this.chain.then(() => this.scanAll(sources));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async scanAll(sources: readonly LogSource[]): Promise<ScanStats> {
    const stats: ScanStats = { files: 0, bytesRead: 0 };
    for (const src of [...sources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      let fh: FileHandle;
      try {
        fh = await src.open();
      } catch {
        continue; // gone, unreadable or outside the run: it simply has nothing to say
      }
      try {
        stats.bytesRead += await this.scanFile(src.name, fh);
        stats.files++;
      } finally {
        await fh.close();
      }
    }
    return stats;
  }

  private async scanFile(name: string, fh: FileHandle): Promise<number> {
    const st = await fh.stat();
    const mtime = st.mtimeMs / 1000;
    if (this.lastModified === null || mtime > this.lastModified) this.lastModified = mtime;
    let fs = this.files.get(name);
    if (!fs || fs.ino !== st.ino || st.size < fs.offset) {
      fs = { offset: 0, line: 1, ino: st.ino, skipping: false, lastTs: null };
      this.files.set(name, fs);
    }
    const size = st.size;
    if (fs.offset >= size) return 0;
    const buf = Buffer.allocUnsafe(Math.min(this.chunkBytes, size - fs.offset));
    let pos = fs.offset; // file position of the next read
    let carry = 0; // buf[0, carry) = the start of a line the last read cut
    let read = 0;
    while (pos < size) {
      const { bytesRead } = await fh.read(buf, carry, Math.min(buf.length - carry, size - pos), pos);
      if (bytesRead <= 0) break;
      read += bytesRead;
      pos += bytesRead;
      const end = carry + bytesRead;
      let start = 0;
      if (fs.skipping) {
        const nl = buf.indexOf(0x0a, 0);
        if (nl < 0 || nl >= end) {
          fs.offset = pos;
          continue;
        }
        fs.skipping = false;
        fs.line++;
        start = nl + 1;
        fs.offset = pos - (end - start);
      }
      const lastNl = buf.lastIndexOf(0x0a, end - 1);
      if (lastNl >= start) {
        this.scanText(name, buf.toString("utf8", start, lastNl + 1), fs, mtime);
        start = lastNl + 1;
        fs.offset = pos - (end - start);
      }
      const left = end - start;
      if (left === buf.length && pos < size) {
        // a line longer than a chunk: judge its first chunk, skip the rest
        this.scanText(name, buf.toString("utf8", 0, end) + "\n", fs, mtime);
        fs.line--; // the line is not over yet
        fs.skipping = true;
        fs.offset = pos;
        carry = 0;
        continue;
      }
      buf.copy(buf, 0, start, end); // a partial line: keep it in front of the next read
      carry = left;
    }
    return read;
  }

  /** `text` = complete lines (ending in `\n`); advances `fs.line` past them. */
  private scanText(name: string, text: string, fs: FileState, mtime: number): void {
    const re = new RegExp(ANY_SIGNAL.source, ANY_SIGNAL.flags);
    const stamps = new RegExp(STAMP.source, STAMP.flags);
    let stampAt = -1; // start of the last stamped line seen before the current match
    let stampTs: number | null = fs.lastTs;
    const stampUpTo = (limit: number) => {
      let m: RegExpExecArray | null;
      let at = -1;
      while ((m = stamps.exec(text)) !== null) {
        if (m.index >= limit) {
          stamps.lastIndex = m.index;
          break;
        }
        at = m.index;
        stamps.lastIndex = Math.max(stamps.lastIndex, text.indexOf("\n", m.index) + 1 || text.length);
      }
      if (at < 0) return;
      const start = text.lastIndexOf("\n", at) + 1;
      if (start === stampAt) return;
      stampAt = start;
      const end = text.indexOf("\n", start);
      stampTs = parseLineTs(text.slice(start, Math.min(end < 0 ? text.length : end, start + 200)), mtime) ?? stampTs;
    };
    let pos = 0; // newlines counted up to here
    let line = fs.line;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      const lineStart = text.lastIndexOf("\n", m.index) + 1;
      for (let i = text.indexOf("\n", pos); i !== -1 && i < lineStart; i = text.indexOf("\n", i + 1)) line++;
      let lineEnd = text.indexOf("\n", m.index);
      if (lineEnd < 0) lineEnd = text.length;
      const str = text.slice(lineStart, lineEnd).replace(/\r$/, "");
      const signals = classifyLine(str);
      if (signals.length) {
        let ts = parseLineTs(str, mtime);
        if (ts === null) {
          stampUpTo(lineStart);
          ts = stampTs ?? mtime;
        }
        for (const signal of signals) this.record(signal, name, line, str, ts);
      }
      pos = lineStart;
      re.lastIndex = lineEnd + 1;
    }
    for (let i = text.indexOf("\n", pos); i !== -1; i = text.indexOf("\n", i + 1)) line++;
    fs.line = line;
    stampUpTo(text.length);
    fs.lastTs = stampTs;
  }

  private record(signal: LogSignalName, file: string, line: number, text: string, ts: number): void {
    const s = this.signals.get(signal)!;
    s.count++;
    if (s.first_ts === null || ts < s.first_ts) s.first_ts = ts;
    if (s.last_ts === null || ts > s.last_ts) s.last_ts = ts;
    const sample = { file, line, text: text.length > SAMPLE_CHARS ? `${text.slice(0, SAMPLE_CHARS)}…` : text };
    s.samples.push(sample);
    if (s.samples.length > MAX_SAMPLES) s.samples.shift();
    this.onMatch?.(signal, { ...sample }, ts);
  }

  /** Every signal in table order, zero counts included (copies). */
  result(): SignalState[] {
    return LOG_SIGNALS.map((sig) => {
      const s = this.signals.get(sig)!;
      return { ...s, samples: s.samples.map((x) => ({ ...x })) };
    });
  }

  /** Everything the scanner keeps between scans (what the memory test measures). */
  retained(): { files: Record<string, FileState>; signals: SignalState[] } {
    return { files: Object.fromEntries([...this.files].map(([k, v]) => [k, { ...v }])), signals: this.result() };
  }
}
