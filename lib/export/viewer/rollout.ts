/**
 * Rollouts in the offline report: per exported step the stat grid (lib/rollout-view/stats,
 * docs/views.md 4.3) and the summary table (4.2), then the picked samples with their
 * conversation cards (6.2, lib/rollout-view/conversation) and token strip coloured by the
 * default per-token stat (6.3, lib/rollout-view/tokens).
 */
import { formatValue } from "@/lib/charts/core/format";
import type { Report, ReportSample } from "@/lib/contracts/report";
import { prepareConversation } from "@/lib/rollout-view/conversation";
import { prepareStatGrid } from "@/lib/rollout-view/stats";
import { defaultStat, prepareTokens, statColor, statScale, tokenTooltip } from "@/lib/rollout-view/tokens";
import { toGroupsView, toSummaryView } from "@/lib/rollout-view/types";
import { h } from "./dom";

type Step = Report["rollout"][string];

export function stepSection(step: string, data: Step): HTMLElement {
  const summary = toSummaryView(data.summary);
  const tiles = prepareStatGrid(summary, toGroupsView(data.groups), false);
  const cols = summary.columns;
  const grid = h(
    "div",
    { class: "stat-grid" },
    tiles.map((t) =>
      h("div", { class: `tile${t.alert ? " alert" : ""}`, title: t.hint, "data-tile": t.key }, h("div", { class: "tile-label" }, t.label), h("div", { class: "tile-value" }, t.value)),
    ),
  );
  const table = h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "summary", "data-rows": summary.rows.length },
      h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
      h(
        "tbody",
        {},
        summary.rows.map((r) => h("tr", {}, cols.map((c) => h("td", {}, formatValue(r[c]))))),
      ),
    ),
  );
  return h("section", { class: "step", id: `step-${step}`, "data-step": step }, h("h3", {}, `Step ${step}`), grid, h("details", {}, h("summary", {}, `summary table (${summary.rows.length} samples)`), table));
}

function tokenStrip(s: ReportSample): HTMLElement {
  if (!s.tokens) return h("p", { class: "absent" }, "tokens unavailable");
  const m = prepareTokens(s.tokens);
  const stat = defaultStat(m.available);
  const sc = stat ? statScale(stat, m.stats[stat]!) : null;
  const strip = h("div", { class: "tokens", "data-tokens": m.n, "data-stat": stat ?? "" });
  const frag = document.createDocumentFragment();
  for (let i = 0; i < m.n; i++) {
    const span = document.createElement("span");
    span.textContent = m.text[i]!;
    span.title = tokenTooltip(m, i);
    if (i < m.respStart) span.className = "tok prompt";
    else {
      span.className = m.masked[i] ? "tok masked" : "tok";
      const c = sc ? statColor(sc, m.stats[stat!]![i]!) : null;
      if (c) span.style.background = c;
    }
    frag.append(span);
    if (m.breakAfter[i]) frag.append(document.createElement("br"));
  }
  strip.append(frag);
  return h("div", {}, h("p", { class: "muted" }, `${m.n} tokens (prompt ${m.promptLen})${sc ? ` · coloured by ${sc.stat}: ${sc.caption}` : ""}`), strip);
}

function conversation(s: ReportSample): HTMLElement {
  if (!s.messages) return h("p", { class: "absent" }, "conversation unavailable");
  const cards = prepareConversation(s.messages.messages, s.messages.prompt);
  return h(
    "div",
    { class: "conversation", "data-cards": cards.length },
    cards.map((c) =>
      h(
        "details",
        { class: `card role-${c.role}`, open: !c.collapsed },
        h("summary", {}, `${c.role}${c.name ? ` (${c.name})` : ""}${c.turn ? ` · turn ${c.turn}` : ""} · ${c.chars} chars`),
        c.blocks.map((b) =>
          b.kind === "tool_call"
            ? h("pre", { class: "block tool" }, `tool_call ${b.name}(${b.args})`)
            : h("pre", { class: `block ${b.kind}` }, b.text),
        ),
      ),
    ),
  );
}

export function sampleSection(step: string, s: ReportSample, row: Record<string, unknown> | undefined): HTMLElement {
  const reward = row ? formatValue(row.raw_reward ?? row.reward) : "—";
  return h(
    "details",
    { class: "sample", "data-step": step, "data-sample": s.sample_index },
    h("summary", {}, `step ${step} · sample ${s.sample_index} · ${s.picks.join(", ")} · reward ${reward}`),
    s.errors.length ? h("p", { class: "absent" }, s.errors.join("; ")) : null,
    h("h4", {}, "Conversation"),
    conversation(s),
    h("h4", {}, "Tokens"),
    tokenStrip(s),
  );
}
