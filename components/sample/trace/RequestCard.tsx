"use client";
/**
 * One SGLang call (docs/views.md 6 "trace"): queue → prefill → decode as one bar that sums
 * to the e2e latency (prefill is the rest once queue and decode are known; its PD segments
 * are listed as measured), with prompt / completion / cached tokens and the engine.
 */
import type { RequestCard as Card } from "@/lib/contracts/traces";
import { formatDuration, formatValue } from "@/lib/charts/core/format";

const PHASE_COLOR = { queue: "#9ca3af", prefill: "#2563eb", decode: "#b7791f" } as const;

const dur = (s: number | null) => (s === null ? "—" : formatDuration(s));

export function RequestCard({ card, n }: { card: Card; n: number }) {
  const total = card.segments.reduce((a, s) => a + Math.max(0, s.seconds ?? 0), 0);
  return (
    <div className="tr-card" data-testid="request-card">
      <h3>
        Request {n} <span className="muted">· {card.name}</span> {card.pd ? <span className="sv-chip">PD</span> : null}
      </h3>
      <div className="tr-facts">
        <span>
          e2e <b>{dur(card.e2e_latency)}</b>
        </span>
        <span>
          prompt <b>{formatValue(card.prompt_tokens)}</b> tok
        </span>
        <span>
          completion <b>{formatValue(card.completion_tokens)}</b> tok
        </span>
        <span>
          cached <b>{formatValue(card.cached_tokens)}</b> tok
        </span>
        {card.decode_throughput !== null ? (
          <span>
            decode <b>{formatValue(Math.round(card.decode_throughput * 10) / 10)}</b> tok/s
          </span>
        ) : null}
        {card.finish_reason ? <span>finish {card.finish_reason}</span> : null}
        <span>engine {card.engine ?? "—"}</span>
      </div>
      {card.segments.length ? (
        <>
          <div className="tr-bar" aria-label="queue, prefill and decode shares of the e2e latency">
            {card.segments.map((s) => (
              <span key={s.phase} title={`${s.phase} ${dur(s.seconds)}`} style={{ width: `${total > 0 ? (Math.max(0, s.seconds ?? 0) / total) * 100 : 0}%`, background: PHASE_COLOR[s.phase] }} />
            ))}
          </div>
          <div className="tr-seg">
            {card.segments.map((s) => (
              <div key={s.phase} style={{ display: "contents" }}>
                <span>
                  <i style={{ display: "inline-block", width: 8, height: 8, background: PHASE_COLOR[s.phase], marginRight: 4 }} />
                  {s.phase}
                </span>
                <span>
                  {dur(s.seconds)}
                  {s.source === "remainder" ? <span className="muted"> (e2e − queue − decode)</span> : null}
                  {s.parts.length ? <span className="tr-parts"> · {s.parts.map((p) => `${p.name} ${dur(p.seconds)}`).join(" · ")}</span> : null}
                </span>
              </div>
            ))}
          </div>
        </>
      ) : (
        <p className="muted rv-note">SGLang reported no queue / decode timing for this call: it cannot be split.</p>
      )}
    </div>
  );
}
