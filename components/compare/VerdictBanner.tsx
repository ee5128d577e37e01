import type { CompareVerdict } from "@/lib/contracts/compare";

/** Single-variable verdict (README "Comparing runs"): never implies a match when args are missing. */
export function VerdictBanner({ verdict, runNames }: { verdict: CompareVerdict; runNames: string[] }) {
  let title: string;
  let detail: string;
  switch (verdict.kind) {
    case "single":
      title = `Single-variable comparison: only ${verdict.keys[0]} differs`;
      detail = "Differences in the signals below can be attributed to this key (and to noise between runs).";
      break;
    case "multiple":
      title = `${verdict.keys.length} config keys differ`;
      detail = `Not a single-variable comparison: ${verdict.keys.slice(0, 6).join(", ")}${verdict.keys.length > 6 ? ", …" : ""}.`;
      break;
    case "identical":
      title = "Identical configs";
      detail = "No args key differs (keys naming the runs aside): differences below are run-to-run noise or non-config causes.";
      break;
    default:
      title = "Verdict unknown";
      detail = `No args snapshot in ${verdict.missing_args.map((i) => runNames[i] ?? `run ${i}`).join(", ")}: the configs cannot be compared, so nothing here says they matched.`;
  }
  return (
    <section className={`cmp-verdict cmp-verdict-${verdict.kind}`} data-testid="compare-verdict" data-kind={verdict.kind} role="status">
      <strong>{title}</strong>
      <span>{detail}</span>
    </section>
  );
}
