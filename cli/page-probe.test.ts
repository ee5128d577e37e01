import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { faultInMs, hugePagesPay, pageProbe, thpMode } from "./page-probe";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmpFile(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-page-probe-test-"));
  dirs.push(d);
  return path.join(d, "probe.json");
}
const hasBootId = fs.existsSync("/proc/sys/kernel/random/boot_id");
/** ms for 64 MB (16,384 pages) at `us` per page */
const at = (us: number) => () => (us * 16_384) / 1000;

describe("page probe", () => {
  it("uses huge pages only where a 4 KiB fault is expensive, under THP madvise", () => {
    expect(hugePagesPay({ file: tmpFile(), thp: "madvise", probe: at(12) })).toBe(true); // 12-06's VM
    expect(hugePagesPay({ file: tmpFile(), thp: "madvise", probe: at(2) })).toBe(false); // 12-07's
    expect(hugePagesPay({ file: tmpFile(), thp: "madvise", probe: at(5) })).toBe(true);
    expect(hugePagesPay({ file: tmpFile(), thp: "madvise", probe: () => Number.NaN })).toBe(false); // a failed probe
    const never = () => {
      throw new Error("probed");
    };
    // the setting only matters under madvise: no probe otherwise
    for (const thp of ["always", "never", ""]) expect(hugePagesPay({ file: tmpFile(), thp, probe: never })).toBe(false);
  });

  it("counts the median of three runs", () => {
    const runs = [40, 400, 60];
    const p = pageProbe("madvise", tmpFile(), () => runs.shift()!);
    expect(p.faultUs).toBeCloseTo((60 * 1000) / 16_384, 9);
    const one = [Number.NaN, 30, Number.NaN];
    expect(pageProbe("madvise", tmpFile(), () => one.shift()!).faultUs).toBeCloseTo((30 * 1000) / 16_384, 9);
    expect(pageProbe("madvise", tmpFile(), () => Number.NaN).faultUs).toBe(-1);
  });

  it.runIf(hasBootId)("keeps its result per boot and THP mode", () => {
    const file = tmpFile();
    let calls = 0;
    const p = pageProbe("madvise", file, () => (calls++, 160));
    expect(p).toMatchObject({ thp: "madvise", faultUs: (160 * 1000) / 16_384 });
    expect(calls).toBe(3);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(p);
    expect(pageProbe("madvise", file, () => (calls++, 1))).toEqual(p); // kept: not probed again
    expect(calls).toBe(3);
    expect(pageProbe("always", file, () => 16.384).faultUs).toBeCloseTo(1, 9); // another mode: probed anew
    fs.writeFileSync(file, "{not json");
    expect(pageProbe("madvise", file, () => 32.768).faultUs).toBeCloseTo(2, 9);
  });

  it.runIf(hasBootId)("neither reads nor writes through a link left at its file's name", () => {
    const file = tmpFile();
    const target = path.join(path.dirname(file), "target.json");
    fs.writeFileSync(target, JSON.stringify({ bootId: fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), thp: "madvise", faultUs: 99 }));
    fs.symlinkSync(target, file);
    // the link's content is not taken: probed anew
    expect(pageProbe("madvise", file, () => 16.384).faultUs).toBeCloseTo(1, 9);
    // and the result replaced the link, not what it pointed at
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(false);
    expect((JSON.parse(fs.readFileSync(target, "utf8")) as { faultUs: number }).faultUs).toBe(99);
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("measures a real child process faulting 64 MB in", () => {
    const ms = faultInMs();
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThan(10_000);
  });

  it("reads the kernel's THP mode, and none from a missing file", () => {
    const f = tmpFile();
    fs.writeFileSync(f, "always defer [madvise] never\n");
    expect(thpMode(f)).toBe("madvise");
    expect(thpMode(path.join(path.dirname(f), "missing"))).toBe("");
  });
});
