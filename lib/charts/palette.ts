/**
 * The one chart palette (light + dark). Canvas code never hard-codes colours: it asks
 * here with the active theme, so the fleet/carpet/lane views share hues (the original
 * drifted into an off-brand set) and dark mode stays readable.
 *
 * Series colours: the first 8 are the colour-blind-validated categorical set of the
 * original; past 8 series we vary lightness instead of repeating a hue (the original
 * cycled after 10, so engine 11 looked like engine 1).
 */

export type ThemeName = "light" | "dark";

export const SERIES_COLORS = [
  "#2a78d6",
  "#d55816",
  "#1baf7a",
  "#e87ba4",
  "#4a3aa7",
  "#eda100",
  "#e34948",
  "#008300",
  "#8a6d3b",
  "#5c6570",
] as const;

const SERIES_COLORS_DARK = [
  "#5b9cf0",
  "#f0804a",
  "#3dd39a",
  "#f39cc0",
  "#9d8ff0",
  "#f5bd3a",
  "#f27372",
  "#4cc24c",
  "#c4a26a",
  "#a3acb8",
] as const;

function hexToRgb(hex: string): [number, number, number] {
  const h = hex.replace("#", "");
  return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)];
}

function rgbToHex([r, g, b]: [number, number, number]): string {
  const c = (v: number) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0");
  return `#${c(r)}${c(g)}${c(b)}`;
}

/** Mix a colour towards white (t > 0) or black (t < 0). */
export function shade(hex: string, t: number): string {
  const [r, g, b] = hexToRgb(hex);
  const target = t > 0 ? 255 : 0;
  const k = Math.abs(t);
  return rgbToHex([r + (target - r) * k, g + (target - g) * k, b + (target - b) * k]);
}

export function withAlpha(hex: string, alpha: number): string {
  const [r, g, b] = hexToRgb(hex);
  return `rgba(${r},${g},${b},${alpha})`;
}

/** Stable colour for the i-th series of a page-wide ordering; no repeat before 30 series. */
export function seriesColor(i: number, theme: ThemeName = "light"): string {
  const base = theme === "dark" ? SERIES_COLORS_DARK : SERIES_COLORS;
  const n = 8; // the validated part; slots 9–10 only as the muted extras
  const idx = ((i % (n * 3)) + n * 3) % (n * 3);
  const hue = base[idx % n]!;
  const round = Math.floor(idx / n);
  if (round === 0) return hue;
  // Later rounds: same hue family, clearly lighter / darker.
  const t = round === 1 ? (theme === "dark" ? -0.35 : 0.4) : theme === "dark" ? 0.35 : -0.35;
  return shade(hue, t);
}

/** Phases considered idle (painted first in the carpet; pale family in the lane view). */
export const IDLE_PHASES = new Set(["initialize", "train_wait", "sleep"]);

const PHASE_COLORS_LIGHT: Record<string, string> = {
  initialize: "#ded6ca",
  rollout: "#d55816",
  eval_rollout: "#e8a683",
  actor_train: "#2a78d6",
  train_log_probs: "#c3b8ec",
  log_probs: "#8b7bd8",
  ref_log_probs: "#4a3aa7",
  data_preprocess: "#eda100",
  train_wait: "#efe8dc",
  update_weights: "#e87ba4",
  ref_model_update: "#008300",
  save_model: "#1baf7a",
  sleep: "#e5ddd0",
  wake_up: "#e34948",
};

// Dark theme: idle phases become dark neutrals (pale bands would glare); active hues keep
// their identity, slightly lifted for contrast on the dark panel.
const PHASE_COLORS_DARK: Record<string, string> = {
  initialize: "#4a443b",
  rollout: "#e0652a",
  eval_rollout: "#c98a66",
  actor_train: "#3f8ae6",
  train_log_probs: "#a99ad8",
  log_probs: "#8b7bd8",
  ref_log_probs: "#7467d0",
  data_preprocess: "#e3a21a",
  train_wait: "#37322b",
  update_weights: "#e87ba4",
  ref_model_update: "#2f9e2f",
  save_model: "#28b886",
  sleep: "#403a32",
  wake_up: "#e85a59",
};

export const UNKNOWN_PHASE_LIGHT = "#9c9488";
export const UNKNOWN_PHASE_DARK = "#7d766b";

export function phaseColor(name: string, theme: ThemeName = "light", carpet = false): string {
  if (carpet && name === "wake_up") return theme === "dark" ? "#4d8fd6" : "#1864ab";
  const table = theme === "dark" ? PHASE_COLORS_DARK : PHASE_COLORS_LIGHT;
  return table[name] ?? (theme === "dark" ? UNKNOWN_PHASE_DARK : UNKNOWN_PHASE_LIGHT);
}

export function isKnownPhase(name: string): boolean {
  return name in PHASE_COLORS_LIGHT;
}

/** Phases drawn with the idle hatch (diagonal strokes) so idle never depends on hue alone. */
export function isHatchedPhase(name: string): boolean {
  return name === "train_wait";
}

/** Lifecycle carpet palette ids 1..3 → colours. */
export function lifecycleColor(name: string, theme: ThemeName = "light"): string {
  if (name === "queue") return theme === "dark" ? "#4a443b" : "#e8e1d8";
  if (name === "generating") return theme === "dark" ? "#f0804a" : "#d55816";
  if (name === "tool_wait") return theme === "dark" ? "#3dd39a" : "#1baf7a";
  return theme === "dark" ? UNKNOWN_PHASE_DARK : UNKNOWN_PHASE_LIGHT;
}

/**
 * Magnitude ramp for the carpet: byte 1..255 → colour; byte 0 → the "no data" colour.
 * Light: pale green → deep green (the original ramp). Dark: deep → bright teal.
 */
export function magnitudeRamp(theme: ThemeName = "light"): { lo: [number, number, number]; hi: [number, number, number]; empty: [number, number, number] } {
  return theme === "dark"
    ? { lo: [28, 52, 45], hi: [94, 230, 180], empty: [30, 28, 24] }
    : { lo: [237, 242, 240], hi: [11, 93, 71], empty: [250, 247, 244] };
}

/** Fixed chart colours that are not CSS variables (util area, memory, overlay). */
export function laneColors(theme: ThemeName = "light") {
  return theme === "dark"
    ? {
        utilStroke: "rgba(110,165,240,0.95)",
        utilFill: "rgba(90,150,235,0.22)",
        mem: "#3dd39a",
        overlay: "#f5a05c",
        drag: "rgba(240,128,74,0.22)",
        brush: "rgba(91,156,240,0.28)",
        hatch: "rgba(236,231,223,0.35)",
        bubble: [240, 112, 112] as [number, number, number],
        bandFill: "rgba(91,156,240,0.22)",
        median: "#5b9cf0",
        min: "#f27372",
      }
    : {
        utilStroke: "rgba(42,120,214,0.9)",
        utilFill: "rgba(42,120,214,0.14)",
        mem: "#1baf7a",
        overlay: "#b84a12",
        drag: "rgba(213,88,22,0.15)",
        brush: "rgba(42,120,214,0.18)",
        hatch: "rgba(122,113,104,0.75)",
        bubble: [224, 96, 96] as [number, number, number],
        bandFill: "rgba(42,120,214,0.16)",
        median: "#2a78d6",
        min: "#c23b3b",
      };
}
