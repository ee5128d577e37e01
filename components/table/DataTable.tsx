"use client";
/**
 * The one table of the app: @tanstack/react-table (v8) over typed `ColumnDef<Row>[]`
 * with an explicit async-state prop, virtualised rows (10 000 rows scroll smoothly; only
 * the visible ~30 are in the DOM), sortable headers, per-column filter inputs and column
 * visibility. Sorting, filters and visibility are lifted (controlled) so the owning view
 * keeps them in the URL. Columns live with the view that owns them.
 * "Download CSV" saves what the table shows: the rows passing the current filters, in the
 * current order, the visible data columns (docs/charts.md §6).
 */
import {
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type ColumnFiltersState,
  type OnChangeFn,
  type Row,
  type RowData,
  type SortingState,
  type VisibilityState,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useRef, type KeyboardEvent, type ReactNode } from "react";
import { parseFilter } from "@/lib/rollout-view/filter";
import { csvCell, csvText, fileStem } from "@/lib/charts/core/csv";
import { downloadBlob } from "@/components/charts/export";

declare module "@tanstack/react-table" {
  // Column metadata the table understands: a header tooltip and the cell alignment.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ColumnMeta<TData extends RowData, TValue> {
    hint?: string;
    align?: "left" | "right";
    /** Accessible name of the header (defaults to the column id). */
    label?: string;
  }
}

export type AsyncState<T> =
  | { isLoading: true; isError: false; data: T | undefined; error?: undefined }
  | { isLoading: false; isError: true; data: T | undefined; error: unknown }
  | { isLoading: false; isError: false; data: T; error?: undefined };

export interface DataTableProps<TRow, TValue> {
  /** Accessible name of the table. */
  label: string;
  columns: ColumnDef<TRow, TValue>[];
  state: AsyncState<TRow[]>;
  getRowId: (row: TRow) => string;
  sorting: SortingState;
  onSortingChange: OnChangeFn<SortingState>;
  columnFilters?: ColumnFiltersState;
  onColumnFiltersChange?: OnChangeFn<ColumnFiltersState>;
  columnVisibility?: VisibilityState;
  /** Row activation (click or Enter). */
  onRowActivate?: (row: TRow) => void;
  rowClassName?: (row: TRow) => string | undefined;
  /** Max height of the scrolling body in px. */
  maxHeight?: number;
  rowHeight?: number;
  renderError?: (error: unknown) => ReactNode;
  empty?: ReactNode;
  /** Shown right of the row count (e.g. a filter hint). */
  footer?: ReactNode;
  /** File name stem of the CSV download (default: the label); false = no download button. */
  csvName?: string | false;
}

const ROW_H = 27;

export function DataTable<TRow, TValue>(props: DataTableProps<TRow, TValue>) {
  const { label, columns, state, sorting, onSortingChange, columnFilters, onColumnFiltersChange, columnVisibility } = props;
  const rowH = props.rowHeight ?? ROW_H;
  const maxHeight = props.maxHeight ?? 480;
  const data = state.data ?? EMPTY;
  const filterable = Boolean(onColumnFiltersChange);

  // eslint-disable-next-line react-hooks/incompatible-library -- no React Compiler in this build (next.config.ts); the instance is read fresh every render, never memoised
  const table = useReactTable<TRow>({
    data: data,
    columns,
    getRowId: props.getRowId,
    state: { sorting, columnFilters: columnFilters ?? [], columnVisibility: columnVisibility ?? {} },
    onSortingChange,
    onColumnFiltersChange,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    enableMultiSort: true,
    isMultiSortEvent: (e) => (e as { shiftKey?: boolean }).shiftKey === true,
    // A new column sorts descending first (largest rewards / lengths on top).
    sortDescFirst: true,
    enableSortingRemoval: false,
  });

  const rows = table.getRowModel().rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowH,
    overscan: 12,
    initialRect: { width: 1000, height: maxHeight },
  });
  const items = virtualizer.getVirtualItems();
  const padTop = items[0]?.start ?? 0;
  const padBottom = items.length ? virtualizer.getTotalSize() - items[items.length - 1]!.end : 0;
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  const total = table.getCoreRowModel().rows.length;

  const activate = (row: Row<TRow>) => props.onRowActivate?.(row.original);
  const downloadCsv = () => {
    // data columns only (a column without an accessor is a rendering, e.g. a link)
    const cols = table.getVisibleLeafColumns().filter((c) => c.accessorFn !== undefined);
    const header = cols.map((c) => c.columnDef.meta?.label ?? c.id);
    const body = rows.map((r) => cols.map((c) => csvCell(r.getValue(c.id))));
    downloadBlob(new Blob([csvText(header, body)], { type: "text/csv;charset=utf-8" }), `${fileStem(props.csvName || label)}.csv`);
  };
  const onKey = (e: KeyboardEvent<HTMLTableRowElement>, row: Row<TRow>) => {
    if (e.key === "Enter") activate(row);
  };

  if (state.isError && !state.data) {
    return <div className="dt-state">{props.renderError ? props.renderError(state.error) : <div className="error-box" role="alert">{String(state.error)}</div>}</div>;
  }

  return (
    <div className="dt">
      <div ref={scrollRef} className="dt-scroll" style={{ maxHeight }} data-testid="dt-scroll">
        <table className="dt-table" aria-label={label} aria-rowcount={rows.length + 1} style={{ width: table.getTotalSize() }}>
          <colgroup>
            {headers.map((h) => (
              <col key={h.id} style={{ width: h.getSize() }} />
            ))}
          </colgroup>
          <thead>
            <tr>
              {headers.map((h) => {
                const sorted = h.column.getIsSorted();
                const sortIdx = sorting.length > 1 ? h.column.getSortIndex() : -1;
                const filterValue = (h.column.getFilterValue() as string | undefined) ?? "";
                const parsed = filterValue ? parseFilter(filterValue) : null;
                const meta = h.column.columnDef.meta;
                return (
                  <th
                    key={h.id}
                    scope="col"
                    aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none"}
                    className={meta?.align === "left" ? "dt-left" : undefined}
                  >
                    {h.column.getCanSort() ? (
                      <button type="button" aria-label={meta?.label ?? h.column.id} className={`dt-sort${sorted ? " dt-sorted" : ""}`} onClick={h.column.getToggleSortingHandler()} title={`${meta?.hint ?? ""}${meta?.hint ? " · " : ""}click to sort, shift-click to add`}>
                        {flexRender(h.column.columnDef.header, h.getContext())}
                        <span className="dt-arrow" aria-hidden="true">
                          {sorted === "desc" ? "▾" : sorted === "asc" ? "▴" : ""}
                          {sortIdx >= 0 ? sortIdx + 1 : ""}
                        </span>
                      </button>
                    ) : (
                      flexRender(h.column.columnDef.header, h.getContext())
                    )}
                    {filterable && h.column.getCanFilter() ? (
                      <input
                        className={`dt-filter${parsed && !parsed.ok ? " dt-filter-bad" : ""}`}
                        aria-label={`Filter ${h.column.id}`}
                        placeholder="filter"
                        value={filterValue}
                        title={parsed && !parsed.ok ? parsed.error : "e.g. >0.5  2..10  true  null  text"}
                        onChange={(e) => h.column.setFilterValue(e.target.value || undefined)}
                      />
                    ) : null}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {padTop > 0 ? (
              <tr aria-hidden="true" className="dt-pad">
                <td colSpan={headers.length} style={{ height: padTop }} />
              </tr>
            ) : null}
            {items.map((vi) => {
              const row = rows[vi.index]!;
              const cls = props.rowClassName?.(row.original);
              return (
                <tr
                  key={row.id}
                  data-index={vi.index}
                  aria-rowindex={vi.index + 2}
                  className={`${props.onRowActivate ? "dt-click " : ""}${cls ?? ""}`}
                  style={{ height: rowH }}
                  tabIndex={props.onRowActivate ? 0 : undefined}
                  onClick={props.onRowActivate ? () => activate(row) : undefined}
                  onKeyDown={props.onRowActivate ? (e) => onKey(e, row) : undefined}
                >
                  {row.getVisibleCells().map((cell) => {
                    const meta = cell.column.columnDef.meta;
                    return (
                      <td key={cell.id} className={meta?.align === "left" ? "dt-left" : undefined}>
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
            {padBottom > 0 ? (
              <tr aria-hidden="true" className="dt-pad">
                <td colSpan={headers.length} style={{ height: padBottom }} />
              </tr>
            ) : null}
          </tbody>
        </table>
        {state.isLoading && !state.data ? <div className="dt-state muted">loading…</div> : null}
        {!state.isLoading && !rows.length && state.data ? <div className="dt-state muted">{total ? "No row matches the filters." : (props.empty ?? "No rows.")}</div> : null}
      </div>
      <div className="dt-foot muted" aria-live="polite">
        <span data-testid="dt-count">{rows.length === total ? `${total} rows` : `${rows.length} of ${total} rows`}</span>
        {props.footer}
        {props.csvName !== false && rows.length > 0 ? (
          <button type="button" className="link-btn dt-csv" onClick={downloadCsv} aria-label={`Download ${label} as CSV`} title="The rows and columns shown, as CSV">
            Download CSV
          </button>
        ) : null}
      </div>
    </div>
  );
}

const EMPTY: never[] = [];
