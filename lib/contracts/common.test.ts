/** FastAPI/pydantic parsing of query strings (docs/api.md 9.1, 9.3). */
import { describe, expect, test } from "vitest";
import type { z } from "zod";
import { QueryBool, QueryFloat, QueryInt, QueryTime } from "@/lib/contracts/common";

const issueOf = (s: z.ZodType, v: unknown) => {
  const r = s.safeParse(v);
  expect(r.success).toBe(false);
  return (r.error!.issues[0] as { params?: Record<string, unknown> }).params;
};

describe("query scalars", () => {
  test.each([["12", 12], [" 12 ", 12], ["+5", 5], ["-3", -3], ["007", 7]])("int %j → %d", (s, n) => {
    expect(QueryInt.parse(s)).toBe(n);
  });
  test.each(["1.5", "1e3", "0x10", "", "abc", "1 2"])("int %j → int_parsing", (s) => {
    expect(issueOf(QueryInt, s)).toEqual({ fastapi: "int_parsing" });
  });
  test.each([["1.5", 1.5], [".5", 0.5], ["5.", 5], ["1e3", 1000], ["-2.5E-1", -0.25], ["inf", Infinity], ["-Infinity", -Infinity]])("float %j → %d", (s, n) => {
    expect(QueryFloat.parse(s)).toBe(n);
  });
  test("float nan", () => expect(QueryFloat.parse("NaN")).toBeNaN());
  test.each(["0x10", "", "1e", "e3", "1,5", "abc"])("float %j → float_parsing", (s) => {
    expect(issueOf(QueryFloat, s)).toEqual({ fastapi: "float_parsing" });
  });
  test.each([["YES", true], ["off", false], ["t", true], ["0", false]])("bool %j → %s", (s, b) => {
    expect(QueryBool.parse(s)).toBe(b);
  });
  test("bool maybe → bool_parsing", () => expect(issueOf(QueryBool, "maybe")).toEqual({ fastapi: "bool_parsing" }));
  test("a window bound refuses non-finite values with a 400 message", () => {
    expect(QueryTime("t0").parse("1e3")).toBe(1000);
    const r = QueryTime("t1").safeParse("-inf");
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe("t1=-inf is not a finite number");
    expect((r.error!.issues[0] as { params?: unknown }).params).toEqual({ status: 400 });
  });
});
