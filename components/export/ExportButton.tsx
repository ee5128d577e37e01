/**
 * "Download offline report" in the run header (docs/export.md "From the UI"): a plain GET
 * form on `/api/export` (the browser's session cookie authenticates it; the answer is an
 * attachment, so the page stays). Options are the CLI's, bounded by the same contract.
 */
import { DEFAULT_MAX_LANES, DEFAULT_SAMPLES_PER_STEP, EXPORT_LIMITS } from "@/lib/contracts/limits";
import "./export.css";

export function ExportButton({ runId }: { runId: string }) {
  return (
    <details className="export-menu" data-testid="export-menu">
      <summary className="btn btn-small">Download offline report</summary>
      <form className="export-form" method="get" action="/api/export">
        <input type="hidden" name="run" value={runId} />
        <label>
          steps <input className="input" name="steps" placeholder="all (e.g. 3-10)" pattern="\d+(-\d+)?" size={10} />
        </label>
        <label>
          samples per step{" "}
          <input className="input" name="samples_per_step" type="number" min={0} max={EXPORT_LIMITS.samples_per_step} defaultValue={DEFAULT_SAMPLES_PER_STEP} />
        </label>
        <label>
          max lanes <input className="input" name="max_lanes" type="number" min={1} max={EXPORT_LIMITS.max_lanes} defaultValue={DEFAULT_MAX_LANES} />
        </label>
        <button className="btn btn-primary btn-small" type="submit" data-testid="export-download">
          Download HTML
        </button>
        <span className="muted">one file, opens offline; the exported samples are audited</span>
      </form>
    </details>
  );
}
