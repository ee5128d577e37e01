"use client";
/**
 * Host telemetry per node (docs/api.md 9.5.6): host CPU and memory, and the job's busiest
 * processes — % of a core, RSS, involuntary switches/s, fds against RLIMIT_NOFILE — with
 * the host advisories (10.5).
 *
 * * `HostPanel` (no window): the newest point, in the run's health panel when the run has
 *   `dashboard/host/` (collector `--host-telemetry`).
 * * `HostWindowPanel`: the Compute Utilization view's panel (docs/views.md §3), over the
 *   visible time window: it follows the viewport like the carpet (keeps the last answer
 *   while the next window loads, polls in follow mode) and shows a failed refresh under
 *   the last answer. Per node: CPU mean and peak, memory at the window end; per process
 *   (top WINDOW_TOP by mean CPU): mean and peak % of a core, RSS at the end, mean involuntary
 *   switches/s and the lowest fd headroom in the window. Absent for runs without host data.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { GetHostResponse } from "@/lib/contracts/health";
import { apiJson, errorMessage } from "@/lib/client/fetcher";
import { FOLLOW_POLL_MS, telemetryUrl } from "@/lib/client/telemetry-queries";
import "@/components/health/host.css";
import { DEFAULT_MAX_WINDOW_S } from "@/lib/charts/timeline-viewport";

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "—" : `${Math.round(x)}%`);
const TOP = 5;
/** Processes per node in the Compute Utilization panel (a node's job is ~8 processes). */
export const WINDOW_TOP = 8;

/** The newest host point per node (shared by both panels: it also says whether the run has host data at all). */
function useNewestHost(runId: string) {
  return useQuery({
    queryKey: ["host", runId],
    queryFn: () => apiJson<GetHostResponse>(`/api/timeline/host?${new URLSearchParams({ run: runId, max_points: "2" }).toString()}`),
    refetchInterval: 30_000,
  });
}

export function HostPanel({ runId }: { runId: string }) {
  const q = useNewestHost(runId);
  const data = q.data;
  if (!data || data.nodes.length === 0) return null;
  return (
    <div className="host-panel" data-testid="host-panel">
      <h3>Hosts</h3>
      {data.advisories.map((a, i) => (
        <p key={i} className="host-advisory">
          △ {a.message}
        </p>
      ))}
      {data.nodes.map((n) => {
        const last = n.series.at(-1);
        const procs = n.procs
          .map((p) => ({ ...p, last: p.points.at(-1) }))
          .filter((p) => p.last)
          .sort((a, b) => (b.last!.cpu_core_pct ?? -1) - (a.last!.cpu_core_pct ?? -1))
          .slice(0, TOP);
        return (
          <div key={n.node} data-node={n.node}>
            <p>
              <strong>{n.node}</strong> · {n.ncpu} cores · CPU {pct(last?.cpu_pct)} · memory {pct(last?.mem_used_pct)} of {(n.mem_total_kb / 1048576).toFixed(0)} GiB
            </p>
            <table className="signals">
              <thead>
                <tr>
                  <th>process</th>
                  <th>% of a core</th>
                  <th>RSS</th>
                  <th>invol. switches/s</th>
                  <th>fds / limit</th>
                </tr>
              </thead>
              <tbody>
                {procs.map((p) => (
                  <tr key={p.pid} className={p.last!.fd_headroom !== null && p.last!.fd_headroom < 0.1 ? "fired fired-warning" : ""}>
                    <td>
                      {p.name} ({p.pid})
                    </td>
                    <td>{pct(p.last!.cpu_core_pct)}</td>
                    <td>{(p.last!.rss_kb / 1048576).toFixed(1)} GiB</td>
                    <td>{p.last!.nonvoluntary_per_s === null ? "—" : p.last!.nonvoluntary_per_s.toFixed(0)}</td>
                    <td>
                      {p.last!.fds} / {p.last!.fd_limit ?? "∞"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      })}
    </div>
  );
}

type HostNodeData = GetHostResponse["nodes"][number];

export interface ProcSummary {
  pid: number;
  name: string;
  role: string | null;
  exited: boolean;
  /** mean and peak % of one core over the window (null: fewer than two samples) */
  coreMean: number | null;
  corePeak: number | null;
  rssKb: number;
  nivcswMean: number | null;
  /** the point with the lowest fd headroom (the fullest fd table) in the window */
  fds: number;
  fdLimit: number | null;
  fdHeadroom: number | null;
}
export interface NodeSummary {
  node: string;
  ncpu: number;
  memTotalKb: number;
  cpuMean: number | null;
  cpuPeak: number | null;
  memUsedPct: number | null;
  samples: number;
  procs: ProcSummary[];
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const peak = (xs: readonly number[]) => (xs.length ? Math.max(...xs) : null);
const nums = (xs: readonly (number | null)[]) => xs.filter((x): x is number => x !== null && Number.isFinite(x));

/** One node's window: CPU mean/peak, memory at the end, the top `top` processes by mean CPU. */
export function summarizeHostNode(n: HostNodeData, top = TOP): NodeSummary {
  const cpu = nums(n.series.map((p) => p.cpu_pct));
  const procs = n.procs
    .filter((p) => p.points.length > 0)
    .map((p): ProcSummary => {
      const core = nums(p.points.map((x) => x.cpu_core_pct));
      const fullest = p.points.reduce((a, b) => ((b.fd_headroom ?? Infinity) < (a.fd_headroom ?? Infinity) ? b : a));
      return {
        pid: p.pid,
        name: p.name,
        role: p.role ?? null,
        exited: p.exited !== undefined,
        coreMean: mean(core),
        corePeak: peak(core),
        rssKb: p.points.at(-1)!.rss_kb,
        nivcswMean: mean(nums(p.points.map((x) => x.nonvoluntary_per_s))),
        fds: fullest.fds,
        fdLimit: fullest.fd_limit,
        fdHeadroom: fullest.fd_headroom,
      };
    })
    .sort((a, b) => (b.coreMean ?? -1) - (a.coreMean ?? -1) || a.pid - b.pid)
    .slice(0, top);
  return {
    node: n.node,
    ncpu: n.ncpu,
    memTotalKb: n.mem_total_kb,
    cpuMean: mean(cpu),
    cpuPeak: peak(cpu),
    memUsedPct: n.series.at(-1)?.mem_used_pct ?? null,
    samples: n.series.length,
    procs,
  };
}

const gib = (kb: number) => `${(kb / 1048576).toFixed(1)} GiB`;
const headroom = (h: number | null) => (h === null ? "no limit" : `${Math.max(0, Math.round(h * 100))}% free`);
/** Points per series asked for: the mean/peak need the window's shape, not every sample. */
export const HOST_WINDOW_POINTS = 240;

export function HostWindowPanel({ runId, win, follow }: { runId: string; win: { t0: number; t1: number }; follow: boolean }) {
  // Whole seconds, never wider than the API's window limit: a 4 h window with fractional
  // bounds rounded outwards to 14401 s, and the panel showed the API's 400 instead.
  const t1 = Math.ceil(win.t1);
  const t0 = Math.max(Math.floor(win.t0), t1 - DEFAULT_MAX_WINDOW_S);
  const q = useQuery({
    queryKey: ["telemetry", runId, "host", t0, t1, HOST_WINDOW_POINTS],
    queryFn: () => apiJson<GetHostResponse>(telemetryUrl(runId, "timeline/host", { t0, t1, max_points: HOST_WINDOW_POINTS })),
    placeholderData: keepPreviousData,
    refetchInterval: follow ? FOLLOW_POLL_MS : false,
  });
  // A run with host data elsewhere says so for an empty window instead of hiding the panel.
  const newest = useNewestHost(runId);
  const hasHost = (newest.data?.nodes.length ?? 0) > 0 || (q.data?.nodes.length ?? 0) > 0;
  const error = q.error ? errorMessage(q.error) : null;
  if (!hasHost && !error) return null;
  const nodes = (q.data?.nodes ?? []).map((n) => summarizeHostNode(n, WINDOW_TOP));
  return (
    <section className="panel tl-panel host-panel" aria-label="Hosts" data-testid="host-window-panel" data-loading={q.isFetching ? "1" : "0"}>
      <h2 className="panel-title">
        Hosts <span className="muted small">CPU, memory and the job&apos;s busiest processes in the visible window</span>
      </h2>
      {error && !q.data ? (
        <p className="error-text" role="alert">
          host telemetry: {error}
        </p>
      ) : null}
      {q.data?.advisories.map((a, i) => (
        <p key={i} className="host-advisory">
          △ at the window end: {a.message}
        </p>
      ))}
      {q.data && nodes.length === 0 ? <p className="muted">no host samples in this window</p> : null}
      {nodes.map((n) => (
        <div key={n.node} data-node={n.node} className="host-node">
          <p>
            <strong>{n.node}</strong> · {n.ncpu} cores · CPU {pct(n.cpuMean)} mean, {pct(n.cpuPeak)} peak · memory {pct(n.memUsedPct)} of {(n.memTotalKb / 1048576).toFixed(0)} GiB{" "}
            <span className="muted small">
              ({n.samples} sample{n.samples === 1 ? "" : "s"})
            </span>
          </p>
          <table className="signals">
            <thead>
              <tr>
                <th>process</th>
                <th>role</th>
                <th>% of a core (mean · peak)</th>
                <th>RSS</th>
                <th>invol. switches/s</th>
                <th>fds / limit (headroom)</th>
              </tr>
            </thead>
            <tbody>
              {n.procs.map((p) => (
                <tr key={p.pid} data-pid={p.pid} className={p.fdHeadroom !== null && p.fdHeadroom < 0.1 ? "fired fired-warning" : ""}>
                  <td>
                    {p.name} ({p.pid}){p.exited ? <span className="muted"> · exited</span> : null}
                  </td>
                  <td>{p.role ?? "—"}</td>
                  <td>{p.coreMean === null ? "—" : `${pct(p.coreMean)} · ${pct(p.corePeak)}`}</td>
                  <td>{gib(p.rssKb)}</td>
                  <td>{p.nivcswMean === null ? "—" : p.nivcswMean.toFixed(0)}</td>
                  <td>
                    {p.fds} / {p.fdLimit ?? "∞"} ({headroom(p.fdHeadroom)})
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {error && q.data ? <p className="warn-text small">refresh failed: {error} (showing the last answer)</p> : null}
    </section>
  );
}
