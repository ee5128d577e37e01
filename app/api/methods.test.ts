/**
 * Every API route answers the methods it does not serve with a 405 JSON error and the
 * `Allow` header (lib/api/errors.ts GET_ONLY), not Next's empty 405 without one: each
 * route module under app/api is imported and asked. e2e/security.spec.ts asks the same
 * through the production server.
 */
import { describe, expect, it } from "vitest";

type Handler = (req: Request, ctx: unknown) => Promise<Response>;
const modules = import.meta.glob<Partial<Record<"GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS", Handler>>>("./**/route.ts");
const OTHER = ["POST", "PUT", "PATCH", "DELETE"] as const;

describe("methods a route does not answer", () => {
  const files = Object.keys(modules).filter((f) => !f.includes("[...unknown]") && !f.includes("[...nextauth]"));

  it("cover every GET route", () => {
    expect(files.length).toBeGreaterThanOrEqual(28);
  });

  it.each(files)("%s: 405, Allow: GET, HEAD, OPTIONS, the error body", async (file) => {
    const mod = await modules[file]!();
    expect(mod.GET, file).toBeTypeOf("function");
    const path = `/api/${file.slice(2, -"/route.ts".length)}`;
    for (const method of OTHER) {
      const handler = mod[method];
      expect(handler, `${file} ${method}`).toBeTypeOf("function");
      const res = await handler!(new Request(`http://127.0.0.1${path}?run=x`, { method }), { params: Promise.resolve({}) });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect(await res.json()).toEqual({
        detail: "Method Not Allowed",
        error: { code: "method_not_allowed", message: `${method} is not allowed on ${path}: it answers GET, HEAD, OPTIONS` },
      });
    }
    // OPTIONS lists what the route answers (Next's own answer listed the 405 methods too)
    const opt = await mod.OPTIONS!(new Request(`http://127.0.0.1${path}`, { method: "OPTIONS" }), { params: Promise.resolve({}) });
    expect(opt.status).toBe(204);
    expect(opt.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
