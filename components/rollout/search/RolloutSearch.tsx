"use client";
/**
 * Rollouts step page → "Search" tab (docs/views.md 4.6, docs/api.md 9.2
 * `/api/rollout/search`): full-text (or regex) search over the prompts, responses and
 * tool calls of a step range; results are samples with each hit highlighted, linking to
 * the Sample view. State in the URL: sq (query), ssteps (range, default this step), sre.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "@/components/shell/Link";
import { useUrlState } from "@/components/charts/use-url-state";
import { apiJson } from "@/lib/client/fetcher";
import type { RolloutSearchResponse } from "@/lib/contracts/drift";
import { sampleHref } from "@/lib/rollout-view/nav";
import { QueryError } from "../QueryError";
import "../drift/drift.css";

export function searchUrl(runId: string, q: string, steps: string, regex: boolean, evaluation: boolean): string {
  const p = new URLSearchParams({ run: runId, q, steps });
  if (regex) p.set("regex", "1");
  if (evaluation) p.set("eval", "1");
  return `/api/rollout/search?${p.toString()}`;
}

export function RolloutSearch({ runId, step, evaluation }: { runId: string; step: number; evaluation: boolean }) {
  const { params, replace } = useUrlState();
  const sq = params.get("sq") ?? "";
  const steps = params.get("ssteps") ?? String(step);
  const regex = params.get("sre") === "1";
  const [draft, setDraft] = useState({ q: sq, steps, regex });
  const q = useQuery({
    queryKey: ["rollout", runId, "search", sq, steps, regex, evaluation],
    queryFn: () => apiJson<RolloutSearchResponse>(searchUrl(runId, sq, steps, regex, evaluation)),
    enabled: sq !== "",
    staleTime: 60_000,
    retry: false,
  });
  const r = q.data;
  return (
    <div role="tabpanel" aria-label="Search">
      <section className="rv-panel" aria-labelledby="sr-title">
        <h2 id="sr-title" className="rv-panel-title">
          Search prompts, responses and tool calls
        </h2>
        <form
          className="sr-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            replace({ sq: draft.q || null, ssteps: draft.steps === String(step) ? null : draft.steps || null, sre: draft.regex ? "1" : null });
          }}
        >
          <input type="search" aria-label="Search text" placeholder="text to find" value={draft.q} onChange={(e) => setDraft((d) => ({ ...d, q: e.target.value }))} />
          <label>
            steps <input aria-label="Search steps" size={8} value={draft.steps} onChange={(e) => setDraft((d) => ({ ...d, steps: e.target.value }))} />
          </label>
          <label>
            <input type="checkbox" checked={draft.regex} onChange={(e) => setDraft((d) => ({ ...d, regex: e.target.checked }))} /> regex
          </label>
          <button type="submit" className="rv-btn">
            Search
          </button>
          {q.isFetching ? <span className="muted rv-hint">searching…</span> : null}
        </form>
        {q.isError ? <QueryError error={q.error} what="the search" /> : null}
        {r ? (
          <>
            <p className="muted rv-hint" data-testid="search-count">
              {r.total}
              {r.truncated ? "+" : ""} hit{r.total === 1 ? "" : "s"} in steps {r.steps.length ? `${r.steps[0]}–${r.steps[r.steps.length - 1]}` : "(none)"}
              {r.returned < r.total ? ` · showing the first ${r.returned}` : ""}
            </p>
            <ul className="sr-list" aria-label="Search results">
              {r.samples.map((s) => (
                <li key={`${s.rollout_id}:${s.sample_index}`}>
                  <Link href={sampleHref(runId, s.rollout_id, s.sample_index, evaluation, new URLSearchParams({ find: sq }))}>
                    step {s.rollout_id} · sample {s.sample_index}
                  </Link>{" "}
                  <span className="muted">({s.hits.length} hit{s.hits.length === 1 ? "" : "s"})</span>
                  {s.hits.slice(0, 3).map((h, i) => (
                    <div key={i} className="sr-hit">
                      <span className="muted">
                        {h.field}
                        {h.message !== null ? ` #${h.message}` : ""}:{" "}
                      </span>
                      {h.snippet.slice(0, h.pre)}
                      <mark>{h.snippet.slice(h.pre, h.pre + h.length)}</mark>
                      {h.snippet.slice(h.pre + h.length)}
                    </div>
                  ))}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>
    </div>
  );
}
