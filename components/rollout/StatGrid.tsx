import type { StatTile } from "@/lib/rollout-view/stats";

export function StatGrid({ tiles, dim = false }: { tiles: StatTile[]; dim?: boolean }) {
  return (
    <div className={`rv-stats${dim ? " rv-dim" : ""}`} role="list" aria-label="Step statistics">
      {tiles.map((t) => (
        <div key={t.key} className={`rv-stat${t.alert ? " rv-stat-alert" : ""}`} role="listitem" title={t.hint} data-testid={`stat-${t.key}`}>
          <div className="rv-stat-value">{t.value}</div>
          <div className="rv-stat-label">{t.label}</div>
        </div>
      ))}
    </div>
  );
}
