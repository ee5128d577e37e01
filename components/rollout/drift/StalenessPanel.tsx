"use client";
/**
 * Staleness of one step (docs/views.md 4.6): samples and response tokens per staleness
 * (trainer version at consume − the sample's oldest weight version), the worst samples,
 * and staleness vs response length (scatter + binned mean) — where discard-and-requeue's
 * bias toward short rollouts shows. Eval steps and runs without versions say why.
 */
import { Link } from "@/components/shell/Link";
import { formatValue } from "@/lib/charts/core/format";
import type { RolloutDriftResponse } from "@/lib/contracts/drift";
import { sampleHref } from "@/lib/rollout-view/nav";
import { Bars } from "./Bars";

type Staleness = RolloutDriftResponse["staleness"];

const W = 420;
const H = 150;

function Scatter({ s }: { s: Staleness }) {
  const xs = s.scatter.response_length;
  const ys = s.scatter.staleness;
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys);
  const px = (x: number) => 6 + (x / xMax) * (W - 12);
  const py = (y: number) => H - 16 - (y / yMax) * (H - 28);
  const line = s.by_length
    .filter((b) => b.mean !== null)
    .map((b) => `${px((b.lo + b.hi) / 2).toFixed(1)},${py(b.mean as number).toFixed(1)}`)
    .join(" ");
  return (
    <svg className="dr-svg" width={W} height={H} role="img" aria-label="Staleness vs response length">
      {xs.map((x, i) => (
        <circle key={i} className="dr-dot" cx={px(x)} cy={py(ys[i] ?? 0)} r={2.5}>
          <title>{`sample ${s.scatter.sample_index[i]}: ${x} tok, staleness ${ys[i]}`}</title>
        </circle>
      ))}
      {line ? <polyline className="dr-line" points={line} /> : null}
      <text x={4} y={H - 3}>
        0
      </text>
      <text x={W - 4} y={H - 3} textAnchor="end">
        response length {formatValue(xMax)}
      </text>
      <text x={4} y={10}>
        staleness {yMax}
      </text>
    </svg>
  );
}

export function StalenessPanel({ runId, step, evaluation, s }: { runId: string; step: number; evaluation: boolean; s: Staleness }) {
  return (
    <section className="rv-panel" aria-labelledby="st-title">
      <h2 id="st-title" className="rv-panel-title">
        Staleness (trainer version − oldest weight version of the sample)
      </h2>
      {!s.available ? (
        <p className="muted" data-testid="staleness-reason">
          {s.reason}
        </p>
      ) : (
        <>
          <div className="dr-kv" aria-label="Staleness summary">
            <span>
              mean <b>{formatValue(s.mean)}</b>
            </span>
            <span>
              token-weighted mean <b>{formatValue(s.token_weighted_mean)}</b>
            </span>
            <span>
              max <b>{s.max}</b>
            </span>
            <span>
              samples <b>{s.samples}</b> · tokens <b>{formatValue(s.tokens)}</b>
            </span>
          </div>
          <div className="dr-row">
            <div>
              <div className="muted rv-hint">samples (bars) and token share (front) per staleness 0…{s.max}</div>
              <Bars
                title="Staleness histogram"
                values={s.by_sample.map((v) => v / Math.max(1, s.samples))}
                overlay={s.by_token.map((v) => v / Math.max(1, s.tokens))}
                label={(i) => `staleness ${i}: ${s.by_sample[i]} samples, ${s.by_token[i]} tokens`}
                axis={["0", String(s.max)]}
              />
            </div>
            <div>
              <div className="muted rv-hint">staleness vs response length (line: binned mean)</div>
              <Scatter s={s} />
            </div>
          </div>
          <div className="muted rv-hint">stalest samples</div>
          <ol className="dr-top" aria-label="Stalest samples">
            {s.worst.slice(0, 10).map((w) => (
              <li key={w.sample_index}>
                <Link href={sampleHref(runId, step, w.sample_index, evaluation)}>sample {w.sample_index}</Link> — staleness {w.staleness}, {formatValue(w.response_length)} tok
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
