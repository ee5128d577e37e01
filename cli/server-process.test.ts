/**
 * `serve --public-url / --trust-proxy` → the server process's environment → the parsed
 * server settings (lib/env.ts) the auth code reads.
 */
import { describe, expect, it } from "vitest";
import { parseServerEnv } from "@/lib/env";
import { CliError } from "./common";
import { isLoopbackHost, parsePublicUrl, resolveCompress, serverEnvVars, serverProcessEnv } from "./server-process";

describe("--public-url", () => {
  it("accepts an http(s) origin, with or without the trailing slash", () => {
    expect(parsePublicUrl("https://dash.lab.example")).toBe("https://dash.lab.example");
    expect(parsePublicUrl("https://Dash.Lab.Example/")).toBe("https://dash.lab.example");
    expect(parsePublicUrl("http://10.0.0.5:8080")).toBe("http://10.0.0.5:8080");
    expect(parsePublicUrl("https://dash.lab.example:443/")).toBe("https://dash.lab.example");
    expect(parsePublicUrl("http://localhost:7788")).toBe("http://localhost:7788");
  });

  it.each([
    ["dash.lab.example", "not a URL"],
    ["ftp://dash.lab.example", "https:// or http://"],
    ["https://dash.lab.example/?a=1", "query or fragment"],
    ["https://dash.lab.example/#top", "query or fragment"],
    ["https://dash.lab.example/?", "query or fragment"],
    ["https://admin:pw@dash.lab.example", "user name or password"],
    ["https://dash.lab.example/rlboard", "must not have a path"],
    ["http://127.0.0.1:7788", "use http://localhost:7788"],
    ["http://[::1]:7788", "use http://localhost:7788"],
  ])("refuses %s with a clear message", (raw, why) => {
    expect(() => parsePublicUrl(raw)).toThrow(CliError);
    expect(() => parsePublicUrl(raw)).toThrow(why);
  });

  it("names the setting it came from", () => {
    expect(() => parsePublicUrl("nope", "AUTH_URL")).toThrow("AUTH_URL 'nope'");
  });
});

describe("serverEnvVars", () => {
  it("passes --trust-proxy and --public-url to the server as RLBOARD_TRUST_PROXY and AUTH_URL", () => {
    const vars = serverEnvVars({ dataDir: "/tmp/x", trustProxy: true, publicUrl: parsePublicUrl("https://dash.lab.example/") });
    expect(vars.RLBOARD_TRUST_PROXY).toBe("1");
    expect(vars.AUTH_URL).toBe("https://dash.lab.example");
    const env = parseServerEnv(vars);
    expect(env.trustProxy).toBe(true);
    expect(env.publicUrl).toBe("https://dash.lab.example");
  });

  it("leaves both off by default", () => {
    const vars = serverEnvVars({ dataDir: "/tmp/x" });
    expect(vars).not.toHaveProperty("RLBOARD_TRUST_PROXY");
    expect(vars).not.toHaveProperty("AUTH_URL");
    const env = parseServerEnv(vars);
    expect(env.trustProxy).toBe(false);
    expect(env.publicUrl).toBeNull();
  });
});

describe("serverProcessEnv", () => {
  const yes = () => true;
  const no = () => false;
  it("passes our environment and the server's settings, and tells glibc what the page probe chose", () => {
    const env = serverProcessEnv({ PATH: "/usr/bin", RLBOARD_DATA_DIR: "/old" }, { RLBOARD_DATA_DIR: "/data" }, yes);
    expect(env).toEqual({ PATH: "/usr/bin", RLBOARD_DATA_DIR: "/data", GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" });
    expect(serverProcessEnv({ PATH: "/usr/bin" }, {}, no).GLIBC_TUNABLES).toBe("glibc.malloc.hugetlb=0");
  });

  it("keeps other tunables, and a hugetlb setting of the user's own without probing", () => {
    expect(serverProcessEnv({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }, {}, yes).GLIBC_TUNABLES).toBe("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
    const never = () => {
      throw new Error("probed although the user chose");
    };
    expect(serverProcessEnv({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=0" }, {}, never).GLIBC_TUNABLES).toBe("glibc.malloc.hugetlb=0");
    expect(serverProcessEnv({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" }, {}, never).GLIBC_TUNABLES).toBe("glibc.malloc.hugetlb=1");
    expect(serverProcessEnv({}, { GLIBC_TUNABLES: "glibc.malloc.arena_max=1:glibc.malloc.hugetlb=2" }, never).GLIBC_TUNABLES).toBe(
      "glibc.malloc.arena_max=1:glibc.malloc.hugetlb=2",
    );
  });
});

describe("--compress", () => {
  it.each(["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"])("auto leaves compression to the proxy on loopback %s", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
    expect(resolveCompress(undefined, host)).toBe("off");
    expect(resolveCompress("auto", host)).toBe("off");
    expect(resolveCompress(" Auto ", host)).toBe("off");
  });

  it.each(["0.0.0.0", "::", "10.1.0.7", "dash.lab.example", "128.0.0.1", "127.0.0.1.example"])("auto gzips on %s, where browsers may connect directly", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
    expect(resolveCompress(undefined, host)).toBe("on");
    expect(resolveCompress("", host)).toBe("on");
  });

  it("on and off override the address", () => {
    expect(resolveCompress("on", "127.0.0.1")).toBe("on");
    expect(resolveCompress("OFF", "0.0.0.0")).toBe("off");
  });

  it.each(["yes", "1", "gzip", "fast"])("refuses %s, naming the setting it came from", (bad) => {
    expect(() => resolveCompress(bad, "127.0.0.1")).toThrow(CliError);
    expect(() => resolveCompress(bad, "127.0.0.1", "--compress")).toThrow(`--compress must be auto, on or off, got '${bad}'`);
    expect(() => resolveCompress(bad, "127.0.0.1")).toThrow("RLBOARD_COMPRESS must be");
  });
});
