/**
 * lib/prometheus pure parts (selectors, PromQL, step, matrix → parts, quantiles) and the
 * client against real 127.0.0.1 HTTP servers that answer like a healthy, failing, hanging
 * or confused Prometheus (docs/api.md 8.6 "Source: Prometheus").
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { parsePrometheusRun } from "@/lib/store/format/prometheus-run";
import { parsePromValue, PromClient } from "@/lib/prometheus/client";
import { bucketQuantile, engineAddr, partsFromMatrices, quantileParts } from "@/lib/prometheus/fold";
import { chooseStep, foldQuery, groupLabels, seriesSelector, targetStampQuery } from "@/lib/prometheus/query";
import { parseSelectorArg, selectorMatchers } from "@/lib/prometheus/selector";

describe("selectors", () => {
  it("parses the command-line form", () => {
    expect(parseSelectorArg("qwen-grpo")).toEqual({ run_name: ["qwen-grpo"] });
    expect(parseSelectorArg("job=sglang,instance=10.0.0.1:15000|10.0.0.2:15000")).toEqual({
      job: ["sglang"],
      instance: ["10.0.0.1:15000", "10.0.0.2:15000"],
    });
    expect(() => parseSelectorArg("pod=x")).toThrow(/unknown label 'pod'/);
    expect(() => parseSelectorArg("job=")).toThrow(/empty value/);
    expect(() => parseSelectorArg("job=a,job=b")).toThrow(/given twice/);
    expect(() => parseSelectorArg(" ")).toThrow(/empty selector/);
  });

  it("parses dashboard/prometheus.json and rejects what would widen or miss", () => {
    expect(parsePrometheusRun('{"run_name": "qwen"}')).toEqual({ run_name: ["qwen"] });
    expect(parsePrometheusRun('{"job": "j", "instance": ["a:1", "b:2"]}')).toEqual({ job: ["j"], instance: ["a:1", "b:2"] });
    expect(() => parsePrometheusRun("{}")).toThrow(/at least one of run_name, job, instance/);
    expect(() => parsePrometheusRun('{"run_nam": "x"}')).toThrow(/run_nam/);
    expect(() => parsePrometheusRun("{nope")).toThrow(/not valid JSON/);
  });

  it("renders escaped PromQL matchers", () => {
    expect(selectorMatchers({ run_name: ['a"b\\c'] })).toEqual(['run_name="a\\"b\\\\c"']);
    expect(selectorMatchers({ instance: ["10.0.0.1:15000", "h:2"], job: ["sglang"] })).toEqual([
      'instance=~"10\\\\.0\\\\.0\\\\.1:15000|h:2"',
      'job="sglang"',
    ]);
  });
});

describe("PromQL and step", () => {
  it("folds by engine, type (and dp rank / le), both name spellings", () => {
    expect(seriesSelector("sglang_num_running_reqs", ['run_name="q"'])).toBe('{__name__=~"sglang:num_running_reqs|sglang_num_running_reqs",run_name="q"}');
    const q = foldQuery("sglang_token_usage", ['job="j"'], "avg", groupLabels(false));
    expect(q.value).toBe('avg by (instance, worker_addr, engine_type) ({__name__=~"sglang:token_usage|sglang_token_usage",job="j"})');
    expect(q.ts).toBe('max by (instance, worker_addr, engine_type) (timestamp({__name__=~"sglang:token_usage|sglang_token_usage",job="j"}))');
    expect(groupLabels(true, true)).toEqual(["instance", "worker_addr", "engine_type", "dp_rank", "le"]);
    expect(targetStampQuery(['run_name="q"'])).toBe('max by (instance) (timestamp(up{run_name="q"}) and on (instance, job) (up{run_name="q"} == 1))');
  });

  it("chooses the step from the buckets, clamped to 11k points and a floor", () => {
    expect(chooseStep(0, 14_400, 2001)).toBe(7.2);
    expect(chooseStep(0, 10, 2000)).toBe(0.25);
    // 4000 buckets over a week: the bucket width; 11k points bound a 4000+ request too.
    expect(chooseStep(0, 604_800, 4000)).toBe(Math.ceil((604_800 / 3999) * 1000) / 1000);
    expect(604_800 / chooseStep(0, 604_800, 100_000)).toBeLessThanOrEqual(10_999);
  });

  it("parses Go float text", () => {
    expect(parsePromValue("+Inf")).toBe(Infinity);
    expect(parsePromValue("-Inf")).toBe(-Infinity);
    expect(parsePromValue("NaN")).toBeNaN();
    expect(parsePromValue("1e+06")).toBe(1e6);
  });
});

describe("matrix → parts", () => {
  it("keeps one point per scrape at the scrape's time", () => {
    const metric = { instance: "10.0.0.1:15000", engine_type: "unified" };
    // Step 0.5 s over scrapes at 100.2, 101.2, 102.2 (the 102.0 point still sees 101.2).
    const grid = [100.5, 101.0, 101.5, 102.0, 102.5];
    const values = [{ metric, ts: grid, value: [10, 10, 12, 12, 15] }];
    const stamps = [{ metric, ts: grid, value: [100.2, 100.2, 101.2, 101.2, 102.2] }];
    const [p, ...rest] = partsFromMatrices(values, stamps);
    expect(rest).toEqual([]);
    expect(p!.addr).toBe("http://10.0.0.1:15000");
    expect(p!.labels).toEqual({ engine_type: "unified" });
    expect(p!.key).toBe('{"engine_type": "unified"}');
    expect(Array.from(p!.ts)).toEqual([100.2, 101.2, 102.2]);
    expect(Array.from(p!.value)).toEqual([10, 12, 15]);
  });

  it("dates every series of a target by its up stamps; per-series stamps win", () => {
    const grid = [10, 11, 12];
    const a = { instance: "router:29000", worker_addr: "http://w1", engine_type: "prefill" };
    const b = { instance: "router:29000", worker_addr: "http://w2", engine_type: "decode" };
    const values = [
      { metric: a, ts: grid, value: [1, 1, 2] },
      { metric: b, ts: grid, value: [5, 6, 7] },
    ];
    const up = { metric: { instance: "router:29000" }, ts: grid, value: [9.5, 10.5, 11.5] };
    const own = { metric: b, ts: grid, value: [9.5, 9.5, 11.5] };
    const parts = partsFromMatrices(values, [up, own]);
    expect(parts.map((p) => [p.addr, Array.from(p.ts), Array.from(p.value)])).toEqual([
      ["http://w1", [9.5, 10.5, 11.5], [1, 1, 2]],
      ["http://w2", [9.5, 11.5], [5, 7]],
    ]);
    // A series with no stamp at all is left out, not dated by the step grid.
    expect(partsFromMatrices(values, [])).toEqual([]);
  });

  it("names the engine by worker_addr behind a router", () => {
    expect(engineAddr({ instance: "router:29000", worker_addr: "http://10.0.0.11:30000" })).toBe("http://10.0.0.11:30000");
    expect(engineAddr({ instance: "10.0.0.1:15000" })).toBe("http://10.0.0.1:15000");
  });
});

describe("quantiles", () => {
  const b = (pairs: [number, number][]) => pairs.map(([upper, count]) => ({ upper, count }));

  it("interpolates like histogram_quantile", () => {
    const h = b([
      [1, 10],
      [5, 30],
      [10, 40],
      [Infinity, 40],
    ]);
    expect(bucketQuantile(0.5, h)).toBeCloseTo(1 + 4 * (10 / 20), 12); // rank 20 in (1, 5]
    expect(bucketQuantile(0.1, h)).toBeCloseTo(0.4, 12); // rank 4 in (0, 1]
    expect(bucketQuantile(0.99, h)).toBeCloseTo(5 + 5 * (9.6 / 10), 12);
    // Rank in +Inf: the highest finite bound.
    expect(bucketQuantile(0.99, b([[1, 1], [Infinity, 10]]))).toBe(1);
    expect(bucketQuantile(0.5, b([[1, 0], [Infinity, 0]]))).toBeNaN();
    expect(bucketQuantile(0.5, b([[1, 3]]))).toBeNaN();
  });

  it("takes interval deltas of the summed buckets; idle or reset intervals are gaps", () => {
    const part = (le: number, value: number[]) => ({
      addr: "http://e",
      labels: {},
      key: "{}",
      le,
      ts: Float64Array.from([1, 2, 3, 4]),
      value: Float64Array.from(value),
    });
    const parts = [part(1, [0, 5, 5, 1]), part(5, [0, 5, 5, 2]), part(Infinity, [0, 10, 10, 3])];
    const [q] = quantileParts(parts, 0.5);
    // 1→2: Δ = (5, 5, 10): rank 5 ≤ 5 → in (0, 1] at its top; 2→3 idle; 3→4 reset.
    expect(Array.from(q!.ts)).toEqual([2]);
    expect(Array.from(q!.value)).toEqual([1]);
  });
});

describe("PromClient against a real HTTP server", () => {
  let server: Server;
  let url: string;
  let mode: "ok" | "hang" | "503" | "bad_data" | "html" = "ok";
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? "");
      if (mode === "hang") return;
      if (mode === "503") return void res.writeHead(503, { "content-type": "text/plain" }).end("Service Unavailable");
      if (mode === "html") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>login</html>");
      if (mode === "bad_data")
        return void res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ status: "error", errorType: "bad_data", error: 'parse error: unexpected "}"' }));
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ status: "success", data: { resultType: "matrix", result: [{ metric: { instance: "a:1" }, values: [[100, "1.5"], [101, "+Inf"]] }] } }),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const failure = async (p: Promise<unknown>): Promise<ApiError> => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(ApiError.is(err)).toBe(true);
    return err as ApiError;
  };

  it("reads a matrix and sends the range", async () => {
    mode = "ok";
    const got = await new PromClient({ url: `${url}/` }).queryRange("up", 100, 101.5, 0.5);
    expect(got).toEqual([{ metric: { instance: "a:1" }, ts: [100, 101], value: [1.5, Infinity] }]);
    const u = new URL(seen.at(-1)!, url);
    expect(u.pathname).toBe("/api/v1/query_range");
    expect(Object.fromEntries(u.searchParams)).toEqual({ query: "up", start: "100.000", end: "101.500", step: "0.5" });
  });

  it("turns every failure into a 502/504 that names the URL", async () => {
    // A generous deadline for the answering modes (the host may be loaded); a short one to hang.
    const client = new PromClient({ url, timeoutMs: 5000 });
    mode = "503";
    let e = await failure(client.queryRange("up", 0, 1, 1));
    expect([e.status, e.message]).toEqual([502, `Prometheus at ${url} answered HTTP 503: Service Unavailable`]);
    mode = "bad_data";
    e = await failure(client.queryRange("up", 0, 1, 1));
    expect(e.status).toBe(502);
    expect(e.message).toBe(`Prometheus at ${url} rejected the query (bad_data: parse error: unexpected "}"); check the run's Prometheus selector`);
    mode = "html";
    e = await failure(client.queryRange("up", 0, 1, 1));
    expect(e.status).toBe(502);
    expect(e.message).toMatch(new RegExp(`^Prometheus at ${url} sent an answer that is not Prometheus' HTTP API`));
    mode = "hang";
    const t = performance.now();
    e = await failure(new PromClient({ url, timeoutMs: 300 }).queryRange("up", 0, 1, 1));
    expect([e.status, e.message]).toEqual([504, `Prometheus at ${url} did not answer within 0.3 s`]);
    expect(performance.now() - t).toBeLessThan(3000);
  });

  it("a closed port is a 502 'did not answer'", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const e = await failure(new PromClient({ url: `http://127.0.0.1:${port}` }).metricNames("{job=\"x\"}"));
    expect([e.status, e.message]).toEqual([502, `Prometheus at http://127.0.0.1:${port} did not answer: ECONNREFUSED`]);
  });
});
