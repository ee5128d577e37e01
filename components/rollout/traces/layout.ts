/** Geometry of the step's request-trace swimlanes, shared by the panel and its placeholder. */
export const ROW_H = 14;
export const TOP = 18;
/** Lanes drawn before "show all" (SVG stays light on big steps). */
export const MAX_ROWS = 400;

/** Height of the drawn panel for `rows` lanes (title, sort chips, the SVG), for a placeholder of the same size. */
export function swimlanesHeight(rows: number): number {
  return 74 + TOP + Math.min(rows, MAX_ROWS) * ROW_H + 4;
}
