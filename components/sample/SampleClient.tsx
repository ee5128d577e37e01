"use client";
/**
 * Sample view (docs/views.md 6): group navigation, the sample's lifecycle lane, chips,
 * and the Conversation (default when a sidecar exists) and Tokens tabs. Summary,
 * trajectory and messages load in parallel (the original chained them); tokens load
 * only when the Tokens tab or the per-turn metrics are opened. Tab, colour stat, chart
 * metric, token page and token range live in the URL.
 */
import { Link } from "@/components/shell/Link";
import { useMemo } from "react";
import { preloadData } from "@/lib/client/preload";
import { rolloutUrls, useRolloutSummary, useSampleMessages, useSampleTokens, useTrajectories } from "@/lib/client/rollout-queries";
import type { Range } from "@/lib/charts/core/range";
import { prepareAnatomy } from "@/lib/rollout-view/anatomy";
import { prepareConversation } from "@/lib/rollout-view/conversation";
import { formatValue } from "@/lib/charts/core/format";
import { formatVersions } from "@/lib/rollout-view/format";
import { groupSiblings, stepHref } from "@/lib/rollout-view/nav";
import { alignTurns, defaultStat, prepareTokens, statScale, TOKEN_PAGE } from "@/lib/rollout-view/tokens";
import type { TokenStat } from "@/lib/rollout-view/types";
import { BatchAnatomy } from "@/components/rollout/BatchAnatomy";
import { isNotFound, QueryError } from "@/components/rollout/QueryError";
import { useUrlState } from "@/components/charts/use-url-state";
import { Conversation } from "./Conversation";
import { GroupNav } from "./GroupNav";
import { TokensPane } from "./TokensPane";
import { TracePanel } from "./trace/TracePanel";
import { SampleLinks } from "./SampleLinks";

export interface SampleClientProps {
  runId: string;
  step: number;
  evaluation: boolean;
  sampleIndex: number;
  hasTokenizer: boolean;
}

function parseRange(raw: string | null): Range | null {
  const m = raw ? /^(-?[\d.]+)-(-?[\d.]+)$/.exec(raw) : null;
  if (!m) return null;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return Number.isFinite(a) && Number.isFinite(b) && b > a ? [a, b] : null;
}

/**
 * Why there is no conversation, from what the server said (docs/api.md 1.5, 7): the step has no
 * trajectory sidecar at all (a dump-only run), or the sidecar has no line for this sample.
 * Only what is known — a missing line says nothing about whether the sample ever reached
 * the model (#15 defect 11).
 */
function noConversationText(err: unknown, sampleIndex: number): string {
  const msg = err instanceof Error ? err.message : "";
  if (/missing\)\s*$/.test(msg)) {
    return "No conversation: this step has no trajectory sidecar (the run wrote its rollout dump only), so what is known is the dump's tokens, reward and per-token stats below.";
  }
  return `No conversation: the step's trajectory sidecar has no line for sample ${sampleIndex} (not recorded, or not written yet). The rollout dump's tokens are below.`;
}

export function SampleClient({ runId, step, evaluation, sampleIndex }: SampleClientProps) {
  const { params, replace } = useUrlState();
  const summary = useRolloutSummary(runId, step, evaluation);
  const traj = useTrajectories(runId, step, sampleIndex, !evaluation);
  const msgs = useSampleMessages(runId, step, evaluation, sampleIndex);
  const noConversation = msgs.isError && isNotFound(msgs.error);
  const hasConversation = Boolean(msgs.data);

  const tabParam = params.get("tab");
  const tab = noConversation ? "tokens" : tabParam === "tokens" ? "tokens" : "conversation";
  const turnsParam = params.get("turns");
  const page = Math.max(0, Math.floor(Number(params.get("page") ?? 0)) || 0);
  const range = parseRange(params.get("range"));
  const wantTokens = tab === "tokens" || turnsParam === "1";
  const start = page * TOKEN_PAGE;
  // Preload (server render) the conversation, and the tokens when the URL opens their tab.
  preloadData([
    rolloutUrls.messages(runId, step, evaluation, sampleIndex),
    ...(wantTokens ? [rolloutUrls.tokens(runId, step, evaluation, sampleIndex, start, start + TOKEN_PAGE)] : []),
    rolloutUrls.summary(runId, step, evaluation),
    ...(!evaluation ? [rolloutUrls.trajectories(runId, step, sampleIndex)] : []),
  ]);
  const tokensQ = useSampleTokens(runId, step, evaluation, sampleIndex, start, start + TOKEN_PAGE, wantTokens);
  const tokens = useMemo(() => (tokensQ.data ? prepareTokens(tokensQ.data) : null), [tokensQ.data]);
  // Per-turn metrics: on when asked for, and by default once the tokens are loaded anyway.
  const metricsOn = turnsParam === "1" || (turnsParam !== "0" && tokens !== null);

  const colorStat = tokens ? defaultStat(tokens.available, params.get("color")) : null;
  const metric = tokens ? defaultStat(tokens.available, params.get("metric")) : null;
  const colorScale = useMemo(() => (tokens && colorStat ? statScale(colorStat, tokens.stats[colorStat]!) : null), [tokens, colorStat]);

  const row = summary.data?.rows.find((r) => r.sample_index === sampleIndex) ?? null;
  const group = useMemo(() => groupSiblings(summary.data?.rows ?? [], sampleIndex, evaluation), [summary.data, sampleIndex, evaluation]);
  const cards = useMemo(() => (msgs.data ? prepareConversation(msgs.data.messages, msgs.data.prompt) : null), [msgs.data]);
  const alignment = useMemo(() => (cards && tokens ? alignTurns(cards, tokens) : null), [cards, tokens]);
  const lane = useMemo(() => (traj.data ? prepareAnatomy(traj.data, "submit", row ? new Map([[sampleIndex, { turns: row.turns, toolCalls: row.tool_calls, reward: row.raw_reward ?? row.reward }]]) : undefined) : null), [traj.data, row, sampleIndex]);

  // Query carried to sibling samples: the tab and colour choices, not the token range.
  const carry = useMemo(() => {
    const q = new URLSearchParams(params.toString());
    for (const k of ["eval", "range", "page"]) q.delete(k);
    return q.toString();
  }, [params]);

  const reward = msgs.data?.reward ?? row?.raw_reward ?? row?.reward ?? null;
  const status = (typeof msgs.data?.status === "string" ? msgs.data.status : null) ?? (typeof row?.status === "string" ? row.status : null);
  const chips: [string, string][] = [];
  if (status) chips.push(["status", status]);
  if (reward !== null && typeof reward !== "object") chips.push(["reward", formatValue(reward)]);
  if (row) {
    if (row.truncated === true) chips.push(["", "truncated"]);
    if (row.remove_sample === true) chips.push(["", "removed from training"]);
    const v = formatVersions(row);
    if (v) chips.push(["", v]);
    chips.push(["response", `${formatValue(row.response_length)} tok`]);
    if (row.turns !== null) chips.push(["turns", formatValue(row.turns)]);
    if (row.tool_calls !== null && row.tool_calls !== undefined) chips.push(["tool results", formatValue(row.tool_calls)]);
    if (row.mean_imp_ratio !== null && row.mean_imp_ratio !== undefined) chips.push(["mean imp_ratio", formatValue(row.mean_imp_ratio)]);
  }

  const tokensPane = (
    <TokensPane
      model={tokens}
      loading={tokensQ.isFetching}
      error={tokensQ.isError ? tokensQ.error : null}
      colorStat={colorStat}
      colorScale={colorScale}
      onColor={(s: TokenStat) => replace({ color: s })}
      metric={metric}
      onMetric={(s: TokenStat) => replace({ metric: s })}
      range={range}
      onRange={(r) => replace({ range: r ? `${Math.round(r[0] * 10) / 10}-${Math.round(r[1] * 10) / 10}` : null })}
      page={page}
      onPage={(p) => replace({ page: p ? String(p) : null, range: null })}
    />
  );

  return (
    <div className="rv sv">
      <div className="rv-controls">
        <Link className="rv-btn" href={stepHref(runId, step, evaluation)}>
          ← {evaluation ? "Eval" : "Train"} step {step}
        </Link>
        <h1 className="sv-title">
          Sample {sampleIndex}
          {evaluation ? <span className="sv-chip">eval</span> : null}
        </h1>
        {summary.isSuccess && !row ? <span className="rv-bad-text">sample {sampleIndex} is not in this step&apos;s summary</span> : null}
      </div>
      <GroupNav runId={runId} step={step} evaluation={evaluation} sampleIndex={sampleIndex} group={group} carry={carry} />
      <SampleLinks runId={runId} step={step} evaluation={evaluation} sampleIndex={sampleIndex} traj={traj.data} trajSettled={traj.isSuccess || traj.isError} />
      {summary.isError ? <QueryError error={summary.error} what="the step summary (group navigation)" /> : null}

      {!evaluation ? (
        traj.isError ? (
          <QueryError error={traj.error} what="the sample lifecycle" />
        ) : lane ? (
          <section className="rv-panel" aria-labelledby="sv-lane-title">
            <h2 id="sv-lane-title" className="rv-panel-title">
              Sample s{sampleIndex} lifecycle — generated, waited, tool-called
            </h2>
            <BatchAnatomy model={lane} single />
          </section>
        ) : traj.isPending ? (
          // the lifecycle's place, kept while it loads: arriving after the tokens chart, it
          // pushed the tabs and the chart 133 px down under the reader (layout-stability.spec)
          <section className="rv-panel sv-lane-pending" aria-hidden="true">
            <h2 className="rv-panel-title muted">Sample s{sampleIndex} lifecycle</h2>
          </section>
        ) : null
      ) : null}

      <TracePanel runId={runId} step={step} evaluation={evaluation} sampleIndex={sampleIndex} />
      {chips.length ? (
        <div className="sv-chips" aria-label="Sample facts">
          {chips.map(([k, v]) => (
            <span key={`${k}${v}`} className={`sv-chip${v === "truncated" || v.startsWith("removed") ? " sv-chip-bad" : ""}`}>
              {k ? <span className="muted">{k} </span> : null}
              {v}
            </span>
          ))}
        </div>
      ) : null}

      {msgs.isPending ? (
        <p className="muted rv-note">loading sample…</p>
      ) : noConversation ? (
        <>
          <p className="muted rv-note" data-testid="no-conversation">
            {noConversationText(msgs.error, sampleIndex)}
          </p>
          {tokensPane}
        </>
      ) : (
        <>
          <div className="rv-tabs" role="tablist" aria-label="Sample views">
            <button type="button" role="tab" className="rv-btn" aria-selected={tab === "conversation"} onClick={() => replace({ tab: null })}>
              Conversation
            </button>
            <button type="button" role="tab" className="rv-btn" aria-selected={tab === "tokens"} onClick={() => replace({ tab: "tokens" })}>
              Tokens
            </button>
          </div>
          <div role="tabpanel" aria-label={tab === "tokens" ? "Tokens" : "Conversation"}>
            {tab === "tokens" ? (
              tokensPane
            ) : msgs.isError ? (
              <QueryError error={msgs.error} what="the conversation" />
            ) : hasConversation && cards ? (
              <Conversation
                cards={cards}
                tokens={tokens}
                alignment={alignment}
                scale={colorScale}
                metricsOn={metricsOn}
                onMetrics={(on) => replace({ turns: on ? "1" : "0" })}
                tokensLoading={tokensQ.isFetching}
                onOpenRange={(r) => replace({ tab: "tokens", range: `${r[0]}-${r[1]}` })}
              />
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}
