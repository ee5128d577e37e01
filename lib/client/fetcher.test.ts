import { describe, expect, test } from "vitest";
import { ApiClientError, errorFromResponse, errorMessageOf } from "@/lib/client/fetcher";
import { retryDelayMs, retryPolicy } from "@/lib/client/query-client";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("error bodies → ApiClientError", () => {
  test("prefers error.message, then a string detail, then the first 422 item", () => {
    expect(errorMessageOf({ detail: "d", error: { code: "not_found", message: "m" } })).toBe("m");
    expect(errorMessageOf({ detail: "Not Found" })).toBe("Not Found");
    expect(errorMessageOf({ detail: [{ type: "missing", loc: ["query", "keys"], msg: "Field required", input: null }] })).toBe("query.keys: Field required");
    expect(errorMessageOf({ detail: [] })).toBeNull();
    expect(errorMessageOf("x")).toBeNull();
  });

  test("a busy 503 carries its code and Retry-After and is retried after it", async () => {
    const e = await errorFromResponse(json(503, { detail: "busy now", error: { code: "busy", message: "busy now" } }, { "retry-after": "2" }));
    expect(e).toBeInstanceOf(ApiClientError);
    expect([e.status, e.code, e.message, e.retryAfterS, e.retryable]).toEqual([503, "busy", "busy now", 2, true]);
    expect(retryPolicy(5, e)).toBe(true);
    expect(retryPolicy(6, e)).toBe(false);
    const d = retryDelayMs(1, e);
    expect(d).toBeGreaterThanOrEqual(2000);
    expect(d).toBeLessThan(2500);
  });

  test("still_writing retries 3 times 1.5 s apart; 4xx never", async () => {
    const w = await errorFromResponse(json(503, { detail: "dump still being written: x", error: { code: "still_writing", message: "dump still being written: x" } }));
    expect([retryPolicy(2, w), retryPolicy(3, w), retryDelayMs(1, w)]).toEqual([true, false, 1500]);
    const bad = await errorFromResponse(json(422, { detail: [{ type: "int_parsing", loc: ["query", "top_k"], msg: "Input should be a valid integer", input: "x" }] }));
    expect([bad.status, bad.code, bad.message, retryPolicy(0, bad)]).toEqual([422, "http_error", "query.top_k: Input should be a valid integer", false]);
  });

  test("a non-JSON body keeps the status line", async () => {
    const e = await errorFromResponse(new Response("<html>", { status: 500 }));
    expect([e.status, e.code, e.message]).toEqual([500, "http_error", "HTTP 500"]);
  });
});
