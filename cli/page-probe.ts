/**
 * Whether the server should ask glibc's malloc for transparent huge pages
 * (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`), decided by measuring this machine.
 *
 * A first request for a window nobody read since the start reads tens to hundreds of MB of
 * cache files into fresh buffers, and the kernel faults that memory in page by page. Which
 * page size serves the server better depends on the VM, and the difference is large both
 * ways (#20, docs/bench.md "12-06 c", "2026-12-07 d"): on 12-06's machine a 4 KiB fault cost
 * 11–13 µs and huge pages cut the 1024-GPU fleet view's first request by a quarter to a
 * third; on 12-07's a 4 KiB fault costs ~2 µs and the same request took half as long again
 * with them (365–380 → 487–755 ms, five alternated starts each).
 *
 * The time of a fresh huge page swung 10× between runs on the second machine (faulting
 * 64 MB in: 12–146 ms), so it cannot be probed in a moment; the cost of a 4 KiB fault is
 * steady (±15 %). So a child Node process faults 64 MB of fresh memory in with 4 KiB pages
 * (three runs, the median counts), and huge pages are used where a page costs
 * SLOW_FAULT_US or more. The result is kept in the temp directory per boot
 * (`/proc/sys/kernel/random/boot_id`) and THP mode, so only the first server start after a
 * boot pays the ~0.2 s.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface PageProbe {
  bootId: string;
  thp: string;
  /** µs to fault one 4 KiB page of fresh memory in (−1: the probe failed) */
  faultUs: number;
}

/** Huge pages are used where a 4 KiB page fault costs at least this many µs. */
export const SLOW_FAULT_US = 5;

const PROBE_MB = 64;
const PROBE_SCRIPT = `const n=${PROBE_MB}<<20;const t=performance.now();const b=new Uint8Array(n);for(let i=0;i<n;i+=4096)b[i]=1;process.stdout.write(String(performance.now()-t))`;

/** The kernel's THP mode (`always`, `madvise`, `never`), or "" where it has none. */
export function thpMode(file = "/sys/kernel/mm/transparent_hugepage/enabled"): string {
  try {
    return /\[(\w+)\]/.exec(fs.readFileSync(file, "utf8"))?.[1] ?? "";
  } catch {
    return "";
  }
}

function bootId(): string {
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/** ms one child Node process takes to fault 64 MB of fresh memory in (NaN if it failed). */
export function faultInMs(): number {
  const r = spawnSync(process.execPath, ["-e", PROBE_SCRIPT], {
    env: { ...process.env, GLIBC_TUNABLES: "glibc.malloc.hugetlb=0", NODE_OPTIONS: "" },
    encoding: "utf8",
    timeout: 10_000,
  });
  const ms = Number(r.stdout);
  return r.status === 0 && Number.isFinite(ms) ? ms : Number.NaN;
}

export function defaultProbeFile(): string {
  return path.join(os.tmpdir(), `rlboard-page-probe-${process.getuid?.() ?? "user"}.json`);
}

/**
 * Whether to start the server with huge pages: only where THP is `madvise` (under `always`
 * the kernel uses them whatever malloc asks; under `never`, or without THP, the setting does
 * nothing) and the probe (kept, or run now) found them faster.
 */
export function hugePagesPay(o: { file?: string; thp?: string; probe?: () => number } = {}): boolean {
  const thp = o.thp ?? thpMode();
  if (thp !== "madvise") return false;
  return pageProbe(thp, o.file ?? defaultProbeFile(), o.probe ?? faultInMs).faultUs >= SLOW_FAULT_US;
}

/** The kept probe of this boot and THP mode, else a new one (kept when the boot is known). */
export function pageProbe(thp: string, file: string, probe: () => number): PageProbe {
  const id = bootId();
  if (id) {
    try {
      // only a plain file of this user's own (the temp dir is shared: another user's file,
      // or a link, is not read)
      const st = fs.lstatSync(file);
      const mine = st.isFile() && (process.getuid === undefined || st.uid === process.getuid());
      const kept = mine ? (JSON.parse(fs.readFileSync(file, "utf8")) as Partial<PageProbe>) : null;
      if (kept && kept.bootId === id && kept.thp === thp && typeof kept.faultUs === "number") return kept as PageProbe;
    } catch {
      /* none kept, or unreadable: probe again */
    }
  }
  const ms = [probe(), probe(), probe()].filter((x) => Number.isFinite(x) && x > 0).sort((a, b) => a - b);
  // the median of the runs that gave a time; −1 where none did (huge pages are then not used)
  const faultUs = ms.length > 0 ? (ms[(ms.length - 1) >> 1]! * 1000) / ((PROBE_MB << 20) / 4096) : -1;
  const p: PageProbe = { bootId: id, thp, faultUs };
  if (id) {
    try {
      // a new file (O_EXCL: never through a link someone left at that name), then renamed
      const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(p), { flag: "wx", mode: 0o600 });
      fs.renameSync(tmp, file);
    } catch {
      /* a read-only temp dir: probe again next time */
    }
  }
  return p;
}
