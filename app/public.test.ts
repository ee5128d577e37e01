/**
 * The static files under public/ and the page metadata keep search engines out: rlboard is
 * a private lab tool (issue #12). Reads the real files from the repository.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { metadata } from "@/app/layout";

const publicDir = fileURLToPath(new URL("../public/", import.meta.url));

describe("public/", () => {
  it("robots.txt disallows every path for every crawler", () => {
    const lines = readFileSync(`${publicDir}robots.txt`, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    expect(lines).toEqual(["User-agent: *", "Disallow: /"]);
  });

  it("favicon.ico is an ICO whose directory entries point at PNG images inside the file", () => {
    const ico = readFileSync(`${publicDir}favicon.ico`);
    expect([...ico.subarray(0, 4)]).toEqual([0, 0, 1, 0]); // reserved 0, type 1 = icon
    const count = ico.readUInt16LE(4);
    expect(count).toBeGreaterThanOrEqual(1);
    const sizes: number[] = [];
    for (let i = 0; i < count; i++) {
      const entry = 6 + 16 * i;
      const width = ico[entry] || 256;
      const length = ico.readUInt32LE(entry + 8);
      const offset = ico.readUInt32LE(entry + 12);
      expect(offset + length).toBeLessThanOrEqual(ico.length);
      const image = ico.subarray(offset, offset + length);
      expect([...image.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      expect(image.readUInt32BE(16)).toBe(width); // IHDR width matches the directory
      sizes.push(width);
    }
    expect(sizes).toContain(16);
    expect(sizes).toContain(32);
  });
});

describe("app/layout metadata", () => {
  it("asks robots not to index or follow any page", () => {
    expect(metadata.robots).toEqual({ index: false, follow: false });
  });

  it("keeps the title template and description", () => {
    expect(metadata.title).toEqual({ default: "rlboard", template: "%s · rlboard" });
    expect(typeof metadata.description).toBe("string");
  });
});
