import { describe, expect, it } from "vitest";
import { ConfigError, parseCollectorArgs } from "./env";
import { SGLANG_DEFAULT_WHITELIST } from "@/lib/store/format";

const parse = (argv: string[], env: Record<string, string> = {}) => parseCollectorArgs(argv, env);

describe("collector env", () => {
  it("applies defaults, resolves paths and reads RLBOARD_* env as fallback", () => {
    const c = parse(["--dump-details", "runs/a", "--node", "10.0.0.1"], { RLBOARD_DATA_DIR: "/data", RLBOARD_COLLECTOR_PORT: "9000" });
    expect(c).toMatchObject({
      help: false,
      port: 9000,
      host: "127.0.0.1",
      scrapeIntervalS: 2,
      scrapeTimeoutS: 5,
      gpuSource: "auto",
      gpuIntervalS: 1,
      flushIntervalS: 2,
      flushBatch: 64,
      maxBuffered: 500000,
      dataDir: "/data",
      engines: [],
      sglangMetrics: SGLANG_DEFAULT_WHITELIST,
      logLevel: "info",
    });
    expect(c.help === false && c.dumpDetails?.endsWith("/runs/a")).toBe(true);
    expect(parse(["--dump-details", "d", "--port", "1"], { RLBOARD_COLLECTOR_PORT: "9000" })).toMatchObject({ port: 1 });
  });

  it("parses lists and modes", () => {
    expect(
      parse(["--dump-details", "d", "--engines", "http://a:1, http://b:2,", "--sglang-metrics", "x,,y", "--gpu-source", "none"]),
    ).toMatchObject({ engines: ["http://a:1", "http://b:2"], sglangMetrics: ["x", "y"], gpuSource: "none" });
    expect(parse(["--gpu-only", "--push", "http://driver:7789"])).toMatchObject({ gpuOnly: true, push: "http://driver:7789" });
    expect(parse(["--help"])).toEqual({ help: true });
  });

  it.each([
    [["--dump-details", "d", "--bogus"], /Unknown option '--bogus'/],
    [["--dump-details", "d", "--port", "x"], /--port must be a number/],
    [["--dump-details", "d", "--port", "70000"], /--port must be an integer in 0..65535/],
    [["--dump-details", "d", "--scrape-interval", "0"], /--scrape-interval must be > 0/],
    [["--dump-details", "d", "--gpu-source", "intel"], /--gpu-source must be one of/],
    [["--dump-details", "d", "--router", "10.0.0.1:3000"], /--router must be an http\(s\) URL/],
    [["--dump-details", "d", "--router", "http://r:1", "--engines", "http://a:1"], /either --router or --engines/],
    [["--dump-details", "d", "--sglang-metrics", ","], /names no metric/],
    [[], /--dump-details DIR is required/],
    [["--gpu-only"], /--gpu-only needs --push/],
    [["--dump-details", "d", "stray"], /positional/],
  ])("%j → one-line ConfigError", (argv, msg) => {
    let err: unknown;
    try {
      parse(argv);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(msg);
    expect((err as Error).message).not.toContain("\n");
  });
});
