/**
 * The web process's configuration, validated exactly once. `npm run serve`
 * (cli/serve.ts) turns its flags into these variables before starting Next; nothing else
 * reads process.env. Tests override with `setServerEnvForTests`.
 */
import path from "node:path";
import { z } from "zod";

const flag = z
  .string()
  .optional()
  .transform((v) => v !== undefined && /^(1|true|yes|on)$/i.test(v));

const ServerEnv = z.object({
  RLBOARD_DATA_DIR: z.string().min(1).default("./data"),
  /** Single-run mode: the run's --dump-details directory. */
  RLBOARD_DUMP_DETAILS: z.string().min(1).optional(),
  /** Multi-run mode: runs roots joined with path.delimiter (":"). */
  RLBOARD_RUNS_ROOTS: z.string().min(1).optional(),
  RLBOARD_FOLLOW: flag,
  RLBOARD_TENSOR_LRU: z.coerce.number().int().min(1).max(64).default(2),
  RLBOARD_LOW_MFU_THRESHOLD: z.coerce.number().min(0).max(1).default(0.15),
  RLBOARD_USE_UTILIZATION_OVERVIEW: flag,
  /** Expensive API queries running at once, server-wide and per user (docs/api.md "Limits"). */
  RLBOARD_MAX_HEAVY: z.coerce.number().int().min(1).max(256).default(2),
  RLBOARD_MAX_HEAVY_PER_USER: z.coerce.number().int().min(1).max(256).default(2),
  /** Expensive queries allowed to wait for a slot (beyond: 503 busy). */
  RLBOARD_HEAVY_QUEUE: z.coerce.number().int().min(0).max(4096).default(16),
  /** Worker threads that parse parts of a large stream file (lib/store/telemetry/parse-pool.ts); unset: one per core beyond the first, at most 3. */
  RLBOARD_PARSE_WORKERS: z.coerce.number().int().min(0).max(16).optional(),
  /** Set to "1" behind a TLS-terminating reverse proxy so cookies are marked Secure. */
  RLBOARD_SECURE_COOKIES: flag,
  /**
   * Trust X-Forwarded-For/-Proto/-Host (a reverse proxy in front): client address for the
   * login lockout, Secure cookies and the public URL come from them. Off by default: then
   * anyone could forge them.
   */
  RLBOARD_TRUST_PROXY: flag,
  /**
   * Extra log files per run for the log signals (docs/api.md 9.5.1): one `RUN_ID=GLOB`
   * per line (`serve --run-logs`, repeatable).
   */
  RLBOARD_RUN_LOGS: z
    .string()
    .refine((s) => s.split("\n").filter(Boolean).every((l) => /^[^=]+=.+$/.test(l)), "RLBOARD_RUN_LOGS: one RUN_ID=GLOB per line")
    .optional(),
  /** Alert webhooks (docs/api.md 9.5.5): one http(s) URL per line (`serve --alert-webhook`, repeatable). */
  RLBOARD_ALERT_WEBHOOKS: z
    .string()
    .refine((s) => s.split("\n").filter(Boolean).every((u) => /^https?:\/\/\S+$/i.test(u)), "RLBOARD_ALERT_WEBHOOKS: one http(s) URL per line")
    .optional(),
  /**
   * The Prometheus that holds the runs' SGLang serving metrics (`serve --prometheus URL`;
   * docs/api.md 8.6 "Source: Prometheus"), and per-run selectors, one `RUN_ID=SELECTOR` per
   * line (`serve --prometheus-run`, repeatable; lib/prometheus/selector.ts).
   */
  RLBOARD_PROMETHEUS_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), "RLBOARD_PROMETHEUS_URL must be an http:// or https:// URL")
    .optional(),
  RLBOARD_PROMETHEUS_RUNS: z
    .string()
    .refine((s) => s.split("\n").filter(Boolean).every((l) => /^[^=]+=.+$/.test(l)), "RLBOARD_PROMETHEUS_RUNS: one RUN_ID=SELECTOR per line")
    .optional(),
  /**
   * The URL users open (https://dash.lab.org): every Auth.js URL and origin check uses it
   * (`serve --public-url` sets it; lib/server/auth/public-url.ts).
   */
  AUTH_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), "AUTH_URL must be an http:// or https:// URL")
    .optional(),
  AUTH_SECRET: z.string().min(16).optional(),
  AUTH_OIDC_ISSUER: z.string().url().optional(),
  AUTH_OIDC_ID: z.string().min(1).optional(),
  AUTH_OIDC_SECRET: z.string().min(1).optional(),
  AUTH_OIDC_NAME: z.string().min(1).default("SSO"),
  AUTH_GITHUB_ID: z.string().min(1).optional(),
  AUTH_GITHUB_SECRET: z.string().min(1).optional(),
  /** Users signing in through OIDC/GitHub get this role on first sign-in. */
  AUTH_OIDC_DEFAULT_ROLE: z.enum(["admin", "member"]).default("member"),
});

export interface ServerEnvironment {
  dataDir: string;
  dumpDetails: string | null;
  runsRoots: string[];
  follow: boolean;
  tensorLru: number;
  lowMfuThreshold: number;
  useUtilizationOverview: boolean;
  /** Admission gate of expensive queries (lib/api/admission.ts). */
  heavy: { maxRunning: number; maxPerUser: number; maxQueue: number };
  /** Parse workers (null: the default for this machine's cores). */
  parseWorkers: number | null;
  secureCookies: boolean;
  trustProxy: boolean;
  /** `serve --run-logs RUN_ID=GLOB`: log globs per run id. */
  runLogs: Record<string, string[]>;
  /** `serve --alert-webhook URL` (repeatable). */
  alertWebhooks: string[];
  /** `serve --prometheus URL` (+ `--prometheus-run RUN_ID=SELECTOR` lines); null: engine series from files only. */
  prometheus: { url: string; runs: Record<string, string>; timeoutMs: number } | null;
  /** Origin of the public URL (rlboard is served at the root of its host); null: from the request. */
  publicUrl: string | null;
  authSecret: string | null;
  oidc: { issuer: string; clientId: string; clientSecret: string; name: string } | null;
  github: { clientId: string; clientSecret: string } | null;
  oidcDefaultRole: "admin" | "member";
}

let cached: ServerEnvironment | null = null;

function emptyAsUndefined(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) out[k] = v === "" ? undefined : v;
  return out;
}

/** `RUN_ID=GLOB` lines → globs per run id (split at the first `=`). */
function parseRunLogs(s: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const l of s.split("\n").filter(Boolean)) {
    const i = l.indexOf("=");
    (out[l.slice(0, i)] ??= []).push(l.slice(i + 1));
  }
  return out;
}

/** One selector per run id: the last one given wins. */
function lastPerRun(lists: Record<string, string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, l] of Object.entries(lists)) out[id] = l[l.length - 1]!;
  return out;
}

export function parseServerEnv(env: Record<string, string | undefined>): ServerEnvironment {
  const e = ServerEnv.parse(emptyAsUndefined(env));
  return {
    dataDir: path.resolve(e.RLBOARD_DATA_DIR),
    dumpDetails: e.RLBOARD_DUMP_DETAILS ? path.resolve(e.RLBOARD_DUMP_DETAILS) : null,
    runsRoots: (e.RLBOARD_RUNS_ROOTS ?? "")
      .split(path.delimiter)
      .filter(Boolean)
      .map((r) => path.resolve(r)),
    follow: e.RLBOARD_FOLLOW,
    tensorLru: e.RLBOARD_TENSOR_LRU,
    lowMfuThreshold: e.RLBOARD_LOW_MFU_THRESHOLD,
    useUtilizationOverview: e.RLBOARD_USE_UTILIZATION_OVERVIEW,
    heavy: { maxRunning: e.RLBOARD_MAX_HEAVY, maxPerUser: e.RLBOARD_MAX_HEAVY_PER_USER, maxQueue: e.RLBOARD_HEAVY_QUEUE },
    parseWorkers: e.RLBOARD_PARSE_WORKERS ?? null,
    secureCookies: e.RLBOARD_SECURE_COOKIES,
    trustProxy: e.RLBOARD_TRUST_PROXY,
    runLogs: parseRunLogs(e.RLBOARD_RUN_LOGS ?? ""),
    alertWebhooks: (e.RLBOARD_ALERT_WEBHOOKS ?? "").split("\n").filter(Boolean),
    prometheus: e.RLBOARD_PROMETHEUS_URL
      ? { url: e.RLBOARD_PROMETHEUS_URL.replace(/\/+$/, ""), runs: lastPerRun(parseRunLogs(e.RLBOARD_PROMETHEUS_RUNS ?? "")), timeoutMs: 5000 }
      : null,
    publicUrl: e.AUTH_URL ? new URL(e.AUTH_URL).origin : null,
    authSecret: e.AUTH_SECRET ?? null,
    oidc:
      e.AUTH_OIDC_ISSUER && e.AUTH_OIDC_ID && e.AUTH_OIDC_SECRET
        ? { issuer: e.AUTH_OIDC_ISSUER, clientId: e.AUTH_OIDC_ID, clientSecret: e.AUTH_OIDC_SECRET, name: e.AUTH_OIDC_NAME }
        : null,
    github:
      e.AUTH_GITHUB_ID && e.AUTH_GITHUB_SECRET ? { clientId: e.AUTH_GITHUB_ID, clientSecret: e.AUTH_GITHUB_SECRET } : null,
    oidcDefaultRole: e.AUTH_OIDC_DEFAULT_ROLE,
  };
}

export function serverEnv(): ServerEnvironment {
  cached ??= parseServerEnv(process.env);
  return cached;
}

/** Tests point the server modules at a temp data dir / run without touching process.env. */
export function setServerEnvForTests(overrides: Partial<ServerEnvironment>): ServerEnvironment {
  cached = { ...parseServerEnv({}), ...overrides };
  return cached;
}
