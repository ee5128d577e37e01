/**
 * The one HTTP client of Prometheus' query API (`/api/v1/query_range`,
 * `/api/v1/label/__name__/values`) the server uses for a run's serving metrics
 * (docs/api.md 8.6 "Source"). Every call has one deadline (default 5 s) so a dead
 * Prometheus never holds a request; answers are validated with zod. Failures are ApiErrors
 * a person can act on, naming the URL:
 *   - refused / reset / DNS       → 502 "Prometheus at URL did not answer: ECONNREFUSED"
 *   - no answer within the limit  → 504 "Prometheus at URL did not answer within 5 s"
 *   - HTTP 5xx (or any non-API)   → 502 "Prometheus at URL answered HTTP 503: …"
 *   - the query rejected (4xx)    → 502 "Prometheus at URL rejected the query (bad_data: …)"
 *   - not the API's JSON          → 502 "Prometheus at URL sent an answer that is not …"
 */
import { z } from "zod";
import { ApiError } from "@/lib/contracts/errors";

export const DEFAULT_TIMEOUT_MS = 5000;
/** Prometheus refuses a range query of more than 11,000 points per series. */
export const MAX_RANGE_POINTS = 11_000;

const Sample = z.tuple([z.number(), z.string()]);
const MatrixResult = z.array(z.object({ metric: z.record(z.string(), z.string()), values: z.array(Sample) }));
const Success = <T extends z.ZodTypeAny>(data: T) => z.object({ status: z.literal("success"), data, warnings: z.array(z.string()).optional() });
const RangeAnswer = Success(z.object({ resultType: z.literal("matrix"), result: MatrixResult }));
const LabelValuesAnswer = Success(z.array(z.string()));
const ErrorAnswer = z.object({ status: z.literal("error"), errorType: z.string().optional(), error: z.string().optional() });

export interface MatrixSeries {
  metric: Record<string, string>;
  /** Step timestamps (unix s) and their values (NaN/±Inf kept). */
  ts: number[];
  value: number[];
}

export interface PromClientOptions {
  url: string;
  timeoutMs?: number;
}

/** Prometheus' float rendering: Go's strconv (`NaN`, `+Inf`, `-Inf`, `1e+06`). */
export function parsePromValue(s: string): number {
  if (s === "+Inf" || s === "Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  return Number(s);
}

function causeText(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; message?: string };
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

export class PromClient {
  readonly url: string;
  readonly timeoutMs: number;

  constructor(opts: PromClientOptions) {
    this.url = opts.url.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private fail(code: "bad_gateway" | "gateway_timeout", what: string, cause?: unknown): ApiError {
    return new ApiError(code, `Prometheus at ${this.url} ${what}`, cause === undefined ? undefined : { cause });
  }

  /** GET `path?params` → the validated JSON body. */
  private async get<T extends z.ZodTypeAny>(path: string, params: URLSearchParams, schema: T): Promise<z.infer<T>> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.url}${path}?${params}`, { signal: AbortSignal.timeout(this.timeoutMs), headers: { accept: "application/json" } });
      text = await res.text();
    } catch (err) {
      const name = (err as { name?: string })?.name;
      if (name === "TimeoutError" || name === "AbortError") throw this.fail("gateway_timeout", `did not answer within ${fmtS(this.timeoutMs)}`, err);
      throw this.fail("bad_gateway", `did not answer: ${causeText(err)}`, err);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const error = ErrorAnswer.safeParse(body);
    if (error.success) {
      const why = `${error.data.errorType ?? "error"}: ${error.data.error ?? "no message"}`;
      if (res.status >= 500) throw this.fail("bad_gateway", `answered HTTP ${res.status} (${why})`);
      throw this.fail("bad_gateway", `rejected the query (${why}); check the run's Prometheus selector`);
    }
    if (!res.ok) throw this.fail("bad_gateway", `answered HTTP ${res.status}: ${snippet(text)}`);
    const ok = schema.safeParse(body);
    if (!ok.success) throw this.fail("bad_gateway", `sent an answer that is not Prometheus' HTTP API (${path}): ${snippet(text)}`);
    return ok.data;
  }

  /** `/api/v1/query_range` (start, end, step in seconds). */
  async queryRange(query: string, start: number, end: number, step: number): Promise<MatrixSeries[]> {
    const params = new URLSearchParams({ query, start: fmtTime(start), end: fmtTime(end), step: String(step) });
    const body = await this.get("/api/v1/query_range", params, RangeAnswer);
    return body.data.result.map((r) => ({
      metric: r.metric,
      ts: r.values.map((v) => v[0]),
      value: r.values.map((v) => parsePromValue(v[1])),
    }));
  }

  /** Metric names of the series matching `match` (one series selector). */
  async metricNames(match: string): Promise<string[]> {
    const params = new URLSearchParams();
    params.append("match[]", match);
    const body = await this.get("/api/v1/label/__name__/values", params, LabelValuesAnswer);
    return body.data;
  }
}

const fmtTime = (t: number) => (Math.round(t * 1000) / 1000).toFixed(3);
const fmtS = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

function snippet(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? `${t.slice(0, 200)}…` : t || "(empty body)";
}
