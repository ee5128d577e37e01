/**
 * Background drawing work (off-screen strips, catching up hidden lanes) runs through one
 * queue that spends at most a few milliseconds per animation frame, so building 32 lane
 * strips never costs one long frame in the middle of a pan.
 */
const BUDGET_MS = 6;
const queue = new Map<object, () => void>();
let raf = 0;

function run(): void {
  raf = 0;
  const start = performance.now();
  for (const [key, job] of queue) {
    queue.delete(key);
    job();
    if (performance.now() - start > BUDGET_MS) break;
  }
  if (queue.size > 0) raf = requestAnimationFrame(run);
}

/** Queue `job` under `key` (a newer job for the same key replaces the older one). */
export function scheduleWork(key: object, job: () => void): void {
  queue.set(key, job);
  if (!raf) raf = requestAnimationFrame(run);
}

export function cancelWork(key: object): void {
  queue.delete(key);
}
