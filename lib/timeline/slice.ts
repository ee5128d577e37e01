/**
 * Cooperative time slicing for the heavy timeline queries. Their work is synchronous CPU
 * over typed-array columns; a query that runs 30–80 ms in one stretch delays every other
 * request on the event loop by as much (`/api/health`, `/api/meta` included). Long loops
 * call the returned function at their boundaries (per partition block, per lane): once
 * SLICE_MS have passed since the last pause it yields to the event loop (setImmediate, so
 * pending socket I/O is served first), then carries on. Calls in between cost one
 * `performance.now()`.
 */
export const SLICE_MS = 8;

export type Slicer = () => Promise<void> | undefined;

export function timeSlicer(budgetMs = SLICE_MS): Slicer {
  let last = performance.now();
  return () => {
    if (performance.now() - last < budgetMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        last = performance.now();
        resolve();
      }),
    );
  };
}
