/**
 * `serve --prometheus URL --prometheus-run RUN_ID=SELECTOR` (docs/collector.md "Serving
 * metrics from Prometheus"): flags → the server's env → lib/env's parsed settings.
 */
import { describe, expect, it } from "vitest";
import { parseServerEnv } from "@/lib/env";
import { prometheusEnvVars } from "./serve";

describe("serve --prometheus", () => {
  it("passes the URL and the per-run selectors through to the server's settings", () => {
    const env = prometheusEnvVars("http://prom:9090/", ["r1=qwen-grpo", "r2=job=sglang,instance=10.0.0.1:15000|10.0.0.2:15000"]);
    expect(env).toEqual({
      RLBOARD_PROMETHEUS_URL: "http://prom:9090/",
      RLBOARD_PROMETHEUS_RUNS: "r1=qwen-grpo\nr2=job=sglang,instance=10.0.0.1:15000|10.0.0.2:15000",
    });
    expect(parseServerEnv(env).prometheus).toEqual({
      url: "http://prom:9090",
      runs: { r1: "qwen-grpo", r2: "job=sglang,instance=10.0.0.1:15000|10.0.0.2:15000" },
      timeoutMs: 5000,
    });
    expect(parseServerEnv({}).prometheus).toBeNull();
    expect(prometheusEnvVars(undefined, [])).toEqual({});
  });

  it("stops at a bad URL or selector with one line", () => {
    expect(() => prometheusEnvVars("prom:9090", [])).toThrow("--prometheus must be an http(s) URL such as http://127.0.0.1:9090, got 'prom:9090'");
    expect(() => prometheusEnvVars(undefined, ["r=x"])).toThrow("--prometheus-run needs --prometheus URL");
    expect(() => prometheusEnvVars("http://p:9090", ["no-selector"])).toThrow("--prometheus-run must be RUN_ID=SELECTOR");
    expect(() => prometheusEnvVars("http://p:9090", ["r=pod=x"])).toThrow("--prometheus-run r=pod=x: unknown label 'pod' (use run_name, job or instance)");
    expect(() => parseServerEnv({ RLBOARD_PROMETHEUS_URL: "ftp://x" })).toThrow(/http:\/\/ or https:\/\//);
  });
});
