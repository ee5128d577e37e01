import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { isOutside, RunFs } from "./safe-fs";

let base: string;
let run: string;
let outside: string;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-safefs-"));
  run = path.join(base, "run");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(run, "trajectory"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "private.jsonl"), "OUTSIDE-MARKER\n");
  fs.writeFileSync(path.join(run, "trajectory", "1.jsonl"), "inside\n");
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(ApiError.is(err)).toBe(true);
  expect(isOutside(err)).toBe(true);
  return err as ApiError;
}

describe("RunFs: nothing resolving outside the run directory is opened", () => {
  test("a file symlink leaving the run is refused with a message naming only the relative file", async () => {
    fs.symlinkSync(path.join(outside, "private.jsonl"), path.join(run, "trajectory", "0.jsonl"));
    const fsys = new RunFs(run);
    const reads = [() => fsys.readFile("trajectory/0.jsonl"), () => fsys.open("trajectory/0.jsonl"), () => fsys.stat("trajectory/0.jsonl")];
    for (const read of reads) {
      const err = await refusal(read());
      expect(err.code).toBe("forbidden");
      expect(err.message).toBe("trajectory/0.jsonl points outside the run directory");
      expect(err.message).not.toContain(outside);
    }
    expect(() => fsys.readFileSync("trajectory/0.jsonl")).toThrow("points outside the run directory");
    expect(await fsys.statOrNull("trajectory/0.jsonl")).toBeNull();
    expect(fsys.statOrNullSync("trajectory/0.jsonl")).toBeNull();
  });

  test("/etc/passwd behind a symlink and `..` paths are refused too", async () => {
    fs.symlinkSync("/etc/passwd", path.join(run, "trajectory", "2.jsonl"));
    const fsys = new RunFs(run);
    await refusal(fsys.readFile("trajectory/2.jsonl"));
    await refusal(fsys.readFile("../outside/private.jsonl"));
  });

  test("a symlink that stays inside the run directory is followed", async () => {
    fs.symlinkSync("1.jsonl", path.join(run, "trajectory", "3.jsonl"));
    const fsys = new RunFs(run);
    expect((await fsys.readFile("trajectory/3.jsonl")).toString()).toBe("inside\n");
    expect(fsys.readFileSync("trajectory/3.jsonl").toString()).toBe("inside\n");
  });

  test("the run directory may itself be reached through a symlink", async () => {
    const alias = path.join(base, "alias");
    fs.symlinkSync(run, alias);
    const fsys = new RunFs(alias);
    expect((await fsys.readFile("trajectory/1.jsonl")).toString()).toBe("inside\n");
    expect(fsys.relOf(path.join(alias, "trajectory", "1.jsonl"))).toBe("trajectory/1.jsonl");
    expect(fsys.relOf(path.join(run, "trajectory", "1.jsonl"))).toBe("trajectory/1.jsonl");
  });

  test("listings leave out entries resolving outside and dangling links; an outside directory lists empty", async () => {
    fs.symlinkSync(path.join(outside, "private.jsonl"), path.join(run, "trajectory", "0.jsonl"));
    fs.symlinkSync("1.jsonl", path.join(run, "trajectory", "3.jsonl"));
    fs.symlinkSync(path.join(run, "nope"), path.join(run, "trajectory", "4.jsonl"));
    fs.symlinkSync(outside, path.join(run, "tokenizer"));
    const fsys = new RunFs(run);
    expect((await fsys.readdir("trajectory")).sort()).toEqual(["1.jsonl", "3.jsonl"]);
    expect(await fsys.readdir("tokenizer")).toEqual([]);
    expect(await fsys.readdir("missing")).toEqual([]);
  });

  test("a listing with stats has the listing's names, each with the stat of what it resolves to", async () => {
    fs.symlinkSync(path.join(outside, "private.jsonl"), path.join(run, "trajectory", "0.jsonl"));
    fs.symlinkSync("1.jsonl", path.join(run, "trajectory", "3.jsonl"));
    fs.symlinkSync(path.join(run, "nope"), path.join(run, "trajectory", "4.jsonl"));
    fs.symlinkSync("/etc/passwd", path.join(run, "trajectory", "5.jsonl"));
    fs.writeFileSync(path.join(run, "trajectory", "6.jsonl"), "six bytes\n".repeat(3));
    fs.mkdirSync(path.join(run, "trajectory", "7.jsonl"));
    fs.symlinkSync(outside, path.join(run, "tokenizer"));
    const fsys = new RunFs(run);
    const listed = await fsys.statEntries("trajectory");
    expect([...listed.keys()].sort()).toEqual((await fsys.readdir("trajectory")).sort());
    expect([...listed.keys()].sort()).toEqual(["1.jsonl", "3.jsonl", "6.jsonl", "7.jsonl"]);
    for (const [name, st] of listed) {
      const one = (await fsys.statOrNull(`trajectory/${name}`))!;
      expect([st.size, st.ino, st.mtimeMs, st.isFile()], name).toEqual([one.size, one.ino, one.mtimeMs, one.isFile()]);
    }
    expect(listed.get("3.jsonl")!.ino).toBe(listed.get("1.jsonl")!.ino); // the link's target, not the link
    expect(listed.get("6.jsonl")!.size).toBe(30);
    expect(listed.get("7.jsonl")!.isFile()).toBe(false);
    expect((await fsys.statEntries("tokenizer")).size).toBe(0);
    expect((await fsys.statEntries("missing")).size).toBe(0);
  });

  test("a missing file keeps its OS error", async () => {
    const err = await new RunFs(run).readFile("trajectory/9.jsonl").catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
  });
});

describe("a directory swapped for a symlink between the check and the open", () => {
  test("the opened file is checked again, so the swap is refused", async () => {
    const rfs = new RunFs(run);
    // Simulate the race: the check passed for a path that, by open time, leads outside.
    const swapped = path.join(outside, "private.jsonl");
    rfs.resolve = () => Promise.resolve(swapped);
    rfs.resolveSync = () => swapped;
    const err = await refusal(rfs.open("trajectory/1.jsonl"));
    expect(err.message).not.toContain("OUTSIDE-MARKER");
    expect(() => rfs.readFileSync("trajectory/1.jsonl")).toThrow(/points outside the run directory/);
  });
});
