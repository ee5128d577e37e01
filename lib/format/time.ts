/** "12 s ago", "5 min ago", "3 h ago", "2 d ago" — for activity columns. */
export function formatAgo(tsSeconds: number | null, nowMs = Date.now()): string {
  if (tsSeconds === null) return "—";
  const s = Math.max(0, Math.round(nowMs / 1000 - tsSeconds));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** ISO-like UTC timestamp for tooltips: 2026-11-29 13:45:02 UTC. */
export function formatUtc(tsSeconds: number | null): string {
  if (tsSeconds === null) return "—";
  return new Date(tsSeconds * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}
