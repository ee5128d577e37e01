"use client";
/**
 * Conversation tab (docs/views.md 6.2): one card per message, role-tagged, with thinking
 * blocks, text, tool-call chips (pretty JSON arguments) and tool results. When the
 * sample's tokens are loaded, each generated turn shows its token range and a heat strip
 * of the chosen per-token stat right under it.
 */
import { useState } from "react";
import type { ConvBlock, ConvCard } from "@/lib/rollout-view/conversation";
import { formatValue } from "@/lib/charts/core/format";
import { rangeMean, type StatScale, type TokenModel, type TurnAlignment } from "@/lib/rollout-view/tokens";
import { TurnStrip } from "./TurnStrip";
import { FindInConversation } from "./FindInConversation";

export interface ConversationProps {
  cards: ConvCard[];
  tokens: TokenModel | null;
  alignment: TurnAlignment | null;
  scale: StatScale | null;
  /** Turn per-token metrics on (loads the tokens) / off. */
  metricsOn: boolean;
  onMetrics: (on: boolean) => void;
  tokensLoading: boolean;
  onOpenRange: (range: readonly [number, number]) => void;
}

function Block({ b }: { b: ConvBlock }) {
  switch (b.kind) {
    case "thinking":
      return (
        <div className="sv-thinking">
          <span className="sv-blocktag">thinking</span>
          {b.text}
        </div>
      );
    case "text":
      return <div className="sv-text">{b.text}</div>;
    case "json":
      return <pre className="sv-text sv-json">{b.text}</pre>;
    case "tool_call":
      return (
        <div className="sv-toolcall">
          <span className="sv-chip sv-chip-tool" data-testid="tool-call-chip">
            ⚙ {b.name}
          </span>
          {b.args ? <pre className={`sv-args${b.json ? " sv-json" : ""}`}>{b.args}</pre> : null}
        </div>
      );
  }
}

const ALIGN_NOTE: Record<TurnAlignment["method"], string> = {
  loss_mask: "turn ranges from the loss mask (trained runs = generated turns)",
  text: "turn ranges found by matching each turn's text in the decoded tokens",
  single: "one generated turn: it owns the whole response",
  none: "",
};

export function Conversation({ cards, tokens, alignment, scale, metricsOn, onMetrics, tokensLoading, onOpenRange }: ConversationProps) {
  const [open, setOpen] = useState<Record<number, boolean>>({});
  const isOpen = (c: ConvCard) => open[c.index] ?? !c.collapsed;
  const setAll = (v: boolean) => setOpen(Object.fromEntries(cards.map((c) => [c.index, v])));
  const showStrips = metricsOn && tokens && alignment;
  const respRange = tokens ? ([tokens.start + tokens.respStart, tokens.start + tokens.n] as const) : null;

  return (
    <section className="rv-panel" aria-labelledby="sv-conv-title">
      <div className="rv-panel-head">
        <h2 id="sv-conv-title" className="rv-panel-title">
          Conversation <span className="muted">({cards.length} messages)</span>
        </h2>
        <div className="rv-controls rv-right">
          <button type="button" className="rv-btn" onClick={() => setAll(true)}>
            expand all
          </button>
          <button type="button" className="rv-btn" onClick={() => setAll(false)}>
            collapse all
          </button>
          <label className="rv-check">
            <input type="checkbox" checked={metricsOn} onChange={(e) => onMetrics(e.target.checked)} /> per-token {scale?.stat ?? "metrics"} under each turn
          </label>
        </div>
      </div>
      <FindInConversation onExpandAll={() => setAll(true)} />
      {metricsOn && tokensLoading && !tokens ? <p className="muted rv-note">loading tokens for the per-turn metrics…</p> : null}
      {showStrips && alignment.method !== "none" ? <p className="muted rv-note">{ALIGN_NOTE[alignment.method]}</p> : null}
      <div className="sv-cards">
        {cards.map((c) => {
          const range = showStrips ? alignment.ranges.get(c.index) : undefined;
          const mean = range && tokens && scale ? rangeMean(tokens, scale.stat, range) : null;
          return (
            <article key={c.index} className={`sv-card sv-role-${c.role}`} data-testid="message-card">
              <button type="button" className="sv-card-head" aria-expanded={isOpen(c)} onClick={() => setOpen((o) => ({ ...o, [c.index]: !isOpen(c) }))}>
                <span className="sv-role">
                  {c.role}
                  {c.name ? ` · ${c.name}` : ""}
                </span>
                {c.turn !== null ? <span className="sv-chip">turn {c.turn}</span> : null}
                <span className="muted">#{c.index}</span>
                {!isOpen(c) ? <span className="muted sv-size">{c.chars} chars</span> : null}
              </button>
              {isOpen(c) ? (
                <div className="sv-card-body">
                  {c.blocks.length ? c.blocks.map((b, i) => <Block key={i} b={b} />) : <span className="muted">(empty)</span>}
                </div>
              ) : null}
              {range && tokens ? (
                <div className="sv-turnmetrics">
                  <span className="muted">
                    tokens {range[0]}–{range[1]} ({range[1] - range[0]}){scale ? ` · mean ${scale.stat} ${formatValue(mean)}` : ""}
                  </span>
                  <TurnStrip model={tokens} range={range} scale={scale} onOpen={() => onOpenRange(range)} label={`${scale?.stat ?? ""} per token of message ${c.index}`} />
                </div>
              ) : null}
            </article>
          );
        })}
        {showStrips && alignment.method === "none" && respRange && tokens ? (
          <article className="sv-card sv-role-response">
            <div className="sv-card-head sv-static">
              <span className="sv-role">response tokens</span>
              <span className="muted">turn boundaries are not recoverable (no loss-mask gaps and no matching text), so the whole response is shown</span>
            </div>
            <div className="sv-turnmetrics">
              <span className="muted">
                tokens {respRange[0]}–{respRange[1]}
                {scale ? ` · mean ${scale.stat} ${formatValue(rangeMean(tokens, scale.stat, respRange))}` : ""}
              </span>
              <TurnStrip model={tokens} range={respRange} scale={scale} onOpen={() => onOpenRange(respRange)} label="per-token metric of the whole response" />
            </div>
          </article>
        ) : null}
      </div>
    </section>
  );
}
