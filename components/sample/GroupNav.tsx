"use client";
/**
 * Group navigation: ◀ Prev in group · Group G · sample k/n · Next in group ▶, plus a
 * sibling overview (reward, status, length of each sample in the GRPO group) so the
 * whole group is one click away. `[` / `]` move within the group.
 */
import { Link } from "@/components/shell/Link";
import { useRouter } from "next/navigation";
import { formatValue } from "@/lib/charts/core/format";
import { sampleHref, type GroupSiblings } from "@/lib/rollout-view/nav";
import { useShortcuts } from "@/components/charts/use-shortcuts";

export function GroupNav({ runId, step, evaluation, sampleIndex, group, carry }: { runId: string; step: number; evaluation: boolean; sampleIndex: number; group: GroupSiblings; carry: string }) {
  const router = useRouter();
  const href = (i: number) => sampleHref(runId, step, i, evaluation, carry);
  useShortcuts((e) => {
    const target = e.key === "[" ? group.prev : e.key === "]" ? group.next : null;
    if (target === null) return false;
    router.push(sampleHref(runId, step, target, evaluation, carry));
    return true;
  });

  if (group.siblings.length < 2) return null;
  return (
    <div className="sv-group">
      <nav className="rv-controls" aria-label="Group navigation">
        {group.prev !== null ? (
          <Link className="rv-btn" href={href(group.prev)} title="previous sample in the group ( [ )">
            ◀ Prev in group
          </Link>
        ) : (
          <span className="rv-btn rv-btn-off" aria-disabled="true">
            ◀ Prev in group
          </span>
        )}
        <span data-testid="group-position">
          Group {group.groupIndex ?? "—"} · sample {group.position + 1}/{group.siblings.length}
        </span>
        {group.next !== null ? (
          <Link className="rv-btn" href={href(group.next)} title="next sample in the group ( ] )">
            Next in group ▶
          </Link>
        ) : (
          <span className="rv-btn rv-btn-off" aria-disabled="true">
            Next in group ▶
          </span>
        )}
        <span className="muted rv-hint">[ / ] = prev / next in group</span>
      </nav>
      <div className="sv-siblings" role="list" aria-label="Samples in this group">
        {group.siblings.map((s) => (
          <Link
            key={s.sampleIndex}
            role="listitem"
            href={href(s.sampleIndex)}
            className={`sv-sib${s.sampleIndex === sampleIndex ? " sv-sib-on" : ""}${s.truncated ? " sv-sib-trunc" : ""}`}
            aria-current={s.sampleIndex === sampleIndex ? "page" : undefined}
            title={`${s.status ?? ""}${s.truncated ? " · truncated" : ""}${s.responseLength !== null ? ` · ${s.responseLength} response tokens` : ""}`}
          >
            s{s.sampleIndex} <span className="muted">r={formatValue(s.reward)}</span>
          </Link>
        ))}
      </div>
    </div>
  );
}
