import { describe, expect, test } from "vitest";
import { healthEnvVars } from "@/cli/serve";
import { parseServerEnv } from "@/lib/env";

describe("serve --run-logs / --alert-webhook reach the server", () => {
  test("flags → env → settings", () => {
    const env = healthEnvVars(["grpo~a=/shared/slurm/*.out", "grpo~a=/x/y=z.log", "b=logs/*.err"], ["https://hooks.slack.com/services/T/B/X", "http://127.0.0.1:9/h"]);
    const s = parseServerEnv(env);
    expect(s.runLogs).toEqual({ "grpo~a": ["/shared/slurm/*.out", "/x/y=z.log"], b: ["logs/*.err"] });
    expect(s.alertWebhooks).toEqual(["https://hooks.slack.com/services/T/B/X", "http://127.0.0.1:9/h"]);
    expect(parseServerEnv({})).toMatchObject({ runLogs: {}, alertWebhooks: [] });
  });

  test("bad values are one clear error", () => {
    expect(() => healthEnvVars(["no-equals-sign"], [])).toThrow(/--run-logs must be RUN_ID=GLOB/);
    expect(() => healthEnvVars([], ["ftp://x"])).toThrow(/--alert-webhook must be an http\(s\) URL/);
    expect(() => parseServerEnv({ RLBOARD_RUN_LOGS: "nope" })).toThrow(/RUN_ID=GLOB/);
  });
});
