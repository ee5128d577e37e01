import { describe, expect, test } from "vitest";
import { MALFORMED_PATH_MESSAGE, malformedPathResponse, pathDecodes } from "@/lib/api/malformed-url";

describe("malformedPathResponse", () => {
  test.each(["/api/rollout/%E0%A4%A/summary", "/runs/%E0%A4%A/timeline", "/api/meta%", "/runs/%zz", "/runs/%C3"])("%s → 400 JSON", async (p) => {
    expect(pathDecodes(p)).toBe(false);
    const res = malformedPathResponse(p)!;
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual({ detail: MALFORMED_PATH_MESSAGE, error: { code: "bad_request", message: MALFORMED_PATH_MESSAGE } });
  });

  test.each(["/", "/api/rollout/0/summary", "/runs/a~b%20c/timeline", "/runs/%E0%A4%A4", "/api/x%2Fy"])("%s passes", (p) => {
    expect(pathDecodes(p)).toBe(true);
    expect(malformedPathResponse(p)).toBeNull();
  });
});
