/**
 * Per-frame build queue of a page of charts (docs/charts.md §7): a card whose data has
 * arrived waits here for its turn, and each animation frame builds (model, axes, canvas
 * draw) the pending cards in priority order — first-screen cards first — until the
 * frame's time budget is spent, at least one per frame. Without it, the cards that enter
 * the viewport together (the first screen, a fast scroll, one batched answer) were all
 * built in one frame: 100–170 ms frames on the 200-metric bench page (issue #15).
 *
 * Pure scheduling: the clock and the frame request are injected (the browser passes
 * `performance.now` and `requestAnimationFrame`; tests pass a fake), so the order and
 * the per-frame budget are unit-tested (build-queue.test.ts).
 */

export interface FrameClock {
  now(): number;
  /** run `cb` at the next frame */
  requestFrame(cb: () => void): void;
}

export interface BuildTask {
  /** lower runs first (e.g. distance from the viewport, 0 for on screen); read each frame */
  priority(): number;
  /** the build itself; its duration counts against the frame's budget */
  run(): void;
}

export interface BuildQueueOptions {
  /** main-thread time a frame may spend on builds, ms */
  budgetMs: number;
  /** hard cap of builds per frame */
  maxPerFrame?: number;
}

export interface BuildQueue {
  /** queue a build; returns a cancel function (no-op once run) */
  enqueue(task: BuildTask): () => void;
  pending(): number;
}

/** Running estimate of one build's cost (ms): the mean of the last few, seeded at `seed`. */
export class CostEstimate {
  private readonly recent: number[] = [];
  constructor(
    private readonly seed: number,
    private readonly keep = 8,
  ) {}
  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.recent.push(ms);
    if (this.recent.length > this.keep) this.recent.shift();
  }
  value(): number {
    if (this.recent.length === 0) return this.seed;
    return this.recent.reduce((a, b) => a + b, 0) / this.recent.length;
  }
}

export function createBuildQueue(clock: FrameClock, opts: BuildQueueOptions): BuildQueue {
  const tasks = new Set<BuildTask>();
  const cost = new CostEstimate(opts.budgetMs / 2);
  const maxPerFrame = Math.max(1, opts.maxPerFrame ?? Number.POSITIVE_INFINITY);
  let scheduled = false;

  const frame = () => {
    scheduled = false;
    const start = clock.now();
    // priorities are read once, before any build of this frame: reading a card's box
    // after a build has changed the page would force a layout per build
    const order = [...tasks].map((t) => ({ t, p: t.priority() })).sort((a, b) => a.p - b.p);
    let ran = 0;
    try {
      for (const { t } of order) {
        if (ran >= maxPerFrame) break;
        // the next build must fit in what is left of the budget (the first always runs)
        if (ran > 0 && clock.now() - start + cost.value() > opts.budgetMs) break;
        if (!tasks.delete(t)) continue; // cancelled by an earlier build of this frame
        const t0 = clock.now();
        try {
          t.run();
        } finally {
          cost.add(clock.now() - t0);
          ran++;
        }
      }
    } finally {
      // a build that throws still leaves the others their frames
      if (tasks.size > 0) schedule();
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    clock.requestFrame(frame);
  };

  return {
    enqueue(task) {
      tasks.add(task);
      schedule();
      return () => {
        tasks.delete(task);
      };
    },
    pending: () => tasks.size,
  };
}

/**
 * Priority of a card from its box and the viewport height: on screen first, top to
 * bottom (0 … innerHeight), then the others by their distance from the viewport edge,
 * after every on-screen card.
 */
export function viewportPriority(rect: { top: number; bottom: number }, viewportH: number): number {
  if (rect.bottom > 0 && rect.top < viewportH) return Math.max(0, rect.top);
  const dist = rect.top >= viewportH ? rect.top - viewportH : -rect.bottom;
  return viewportH + dist;
}
