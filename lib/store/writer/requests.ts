/**
 * Appender of the per-request SGLang timing stream (docs/formats.md §4.14):
 * `dashboard/requests/{rollout_id}.jsonl`. Writes are serialised (one chain per appender);
 * each batch is appended to its rollout's file in one write, after a newline when a
 * previous writer left a torn last line (which readers drop, so it never glues onto a
 * new record).
 */
import path from "node:path";
import { REQUESTS_STREAM, requestsFileName, serializeRequestRecords, type RequestRecord } from "@/lib/store/format";
import { nodeWriterFs, type WriterFs } from "./writer-fs";

export class RequestsAppender {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly dir: string;

  constructor(
    dashDir: string,
    private readonly fs: WriterFs = nodeWriterFs,
  ) {
    this.dir = path.join(dashDir, REQUESTS_STREAM);
  }

  /** Append the records (grouped per rollout file); resolves when they are written. */
  append(records: readonly RequestRecord[]): Promise<void> {
    const run = this.chain.then(() => this.write(records));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async write(records: readonly RequestRecord[]): Promise<void> {
    if (!records.length) return;
    const byFile = new Map<string, RequestRecord[]>();
    for (const r of records) {
      const f = requestsFileName(r.rollout_id, r.evaluation);
      let list = byFile.get(f);
      if (!list) byFile.set(f, (list = []));
      list.push(r);
    }
    await this.fs.mkdir(this.dir);
    for (const [name, list] of byFile) {
      const fh = await this.fs.openAppend(path.join(this.dir, name));
      try {
        const { size } = await fh.stat();
        let text = serializeRequestRecords(list);
        if (size > 0) {
          const last = new Uint8Array(1);
          await fh.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) text = `\n${text}`;
        }
        const buf = Buffer.from(text, "utf8");
        let off = 0;
        while (off < buf.length) off += (await fh.write(buf, off, buf.length - off, null)).bytesWritten;
      } finally {
        await fh.close();
      }
    }
  }
}
