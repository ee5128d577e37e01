"use client";
/**
 * Host telemetry per node (docs/api.md 9.5.6), newest point: host CPU and memory, and the
 * job's busiest processes — % of a core, RSS, involuntary switches/s, fds against
 * RLIMIT_NOFILE — with the host advisories (10.5). Shown in the run's health panel when
 * the run has `dashboard/host/` (collector `--host-telemetry`).
 */
import { useQuery } from "@tanstack/react-query";
import type { GetHostResponse } from "@/lib/contracts/health";
import { apiJson } from "@/lib/client/fetcher";

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "—" : `${Math.round(x)}%`);
const TOP = 5;

export function HostPanel({ runId }: { runId: string }) {
  const q = useQuery({
    queryKey: ["host", runId],
    queryFn: () => apiJson<GetHostResponse>(`/api/timeline/host?${new URLSearchParams({ run: runId, max_points: "2" }).toString()}`),
    refetchInterval: 30_000,
  });
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
