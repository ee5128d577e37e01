"use client";
/** Column definitions of the samples and groups tables (they live with the view that owns them). */
import type { ColumnDef } from "@tanstack/react-table";
import { Link } from "@/components/shell/Link";
import { Fragment } from "react";
import { COLUMN_HINTS, NOT_APPLICABLE } from "@/lib/rollout-view/columns";
import { matchesFilter } from "@/lib/rollout-view/filter";
import { formatValue } from "@/lib/charts/core/format";
import type { Cell } from "@/lib/rollout-view/types";

type AnyRow = Record<string, Cell>;
export type CellValue = Cell | undefined;

const TEXT_COLUMNS = new Set(["status", "versions", "weight_version"]);

/** Width from the longest underscore-separated part: headers wrap at underscores. */
function size(id: string): number {
  const longest = Math.max(...id.split("_").map((p) => p.length));
  return Math.max(78, Math.min(150, Math.round(Math.max(longest * 8.5, id.length * 4.6) + 30)));
}

/** The column id with a line-break opportunity after each underscore (name stays the id). */
function header(id: string) {
  const parts = id.split("_");
  return parts.map((p, i) => (
    <Fragment key={i}>
      {p}
      {i < parts.length - 1 ? (
        <>
          _<wbr />
        </>
      ) : null}
    </Fragment>
  ));
}

/** One column per id: nulls sort last in both directions, the shared filter grammar, §1.8 cells. */
export function dataColumns<R extends AnyRow>(
  ids: readonly string[],
  opts: {
    linkFirst?: (row: R) => string;
    /** column → why it does not apply (to this row): such cells say n/a with that title */
    notApplicable?: Record<string, string | ((row: R) => string | null)>;
  } = {},
): ColumnDef<R, CellValue>[] {
  return ids.map((id, i) => ({
    id,
    header: () => header(id),
    // undefined (not null) so react-table's sortUndefined keeps absent values last.
    accessorFn: (row: R) => row[id] ?? undefined,
    sortUndefined: "last",
    sortingFn: TEXT_COLUMNS.has(id) ? "alphanumeric" : "basic",
    filterFn: (row, colId, value: string) => matchesFilter(row.getValue<CellValue>(colId), value),
    size: size(id),
    meta: { hint: COLUMN_HINTS[id], align: i === 0 || TEXT_COLUMNS.has(id) ? "left" : "right" },
    cell: (ctx) => {
      const rule = opts.notApplicable?.[id];
      const na = typeof rule === "function" ? rule(ctx.row.original) : rule;
      if (na)
        return (
          <span className="muted" title={na}>
            {NOT_APPLICABLE}
          </span>
        );
      const text = formatValue(ctx.row.original[id]);
      if (i === 0 && opts.linkFirst)
        return (
          <Link href={opts.linkFirst(ctx.row.original)} onClick={(e) => e.stopPropagation()} prefetch={false}>
            {text}
          </Link>
        );
      return text;
    },
  }));
}
