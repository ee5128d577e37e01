/** The run header's args snapshot (meta.json, dotted paths) and wandb link (README "Comparing runs"). */
export function RunHeaderArgs({ args, wandbUrl }: { args: Record<string, string | number | boolean | null> | null; wandbUrl: string | null }) {
  const entries = args ? Object.entries(args) : [];
  return (
    <div className="run-header-args">
      {wandbUrl ? (
        <a href={wandbUrl} target="_blank" rel="noreferrer" data-testid="wandb-link">
          wandb ↗
        </a>
      ) : null}
      <details>
        <summary className="muted">{args ? `config (${entries.length} args)` : "no args snapshot"}</summary>
        {args ? (
          <table className="kv run-args-table" data-testid="run-args">
            <tbody>
              {entries.map(([k, v]) => (
                <tr key={k}>
                  <td className="mono">{k}</td>
                  <td className="mono">{typeof v === "string" ? v : JSON.stringify(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </details>
    </div>
  );
}
