import { act } from "react";
import { describe, expect, it } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import type { ColumnFiltersState, SortingState } from "@tanstack/react-table";
import { useState } from "react";
import { dataColumns, type CellValue } from "@/components/rollout/rollout-columns";
import { DataTable, type AsyncState } from "./DataTable";

type Row = { sample_index: number; raw_reward: number | null; status: string };
const rows: Row[] = Array.from({ length: 5000 }, (_, i) => ({ sample_index: i, raw_reward: i % 7 === 0 ? null : (i % 5) / 4, status: i % 3 ? "completed" : "truncated" }));
const columns = dataColumns<Row>(["sample_index", "raw_reward", "status"]);

function Harness({ state, onSort }: { state: AsyncState<Row[]>; onSort?: (s: SortingState) => void }) {
  const [sorting, setSorting] = useState<SortingState>([{ id: "sample_index", desc: false }]);
  const [filters, setFilters] = useState<ColumnFiltersState>([]);
  return (
    <DataTable<Row, CellValue>
      label="Samples"
      columns={columns}
      state={state}
      getRowId={(r) => String(r.sample_index)}
      sorting={sorting}
      onSortingChange={(u) => {
        const next = typeof u === "function" ? u(sorting) : u;
        onSort?.(next);
        setSorting(next);
      }}
      columnFilters={filters}
      onColumnFiltersChange={setFilters}
    />
  );
}

const dom = domRootEachTest({ clientSize: { width: 1000, height: 480 } });

const bodyRows = () => [...dom.host.querySelectorAll("tbody tr:not(.dt-pad)")];
const firstCells = () => bodyRows().map((tr) => tr.querySelector("td")?.textContent);

describe("DataTable", () => {
  it("renders only a window of a large table and counts every row", () => {
    act(() => dom.root.render(<Harness state={{ isLoading: false, isError: false, data: rows }} />));
    expect(bodyRows().length).toBeGreaterThan(5);
    expect(bodyRows().length).toBeLessThan(80);
    expect(dom.host.querySelector("[data-testid=dt-count]")?.textContent).toBe("5000 rows");
    expect(firstCells()[0]).toBe("0");
  });

  it("sorts a new column descending first and keeps nulls last", () => {
    const seen: SortingState[] = [];
    act(() => dom.root.render(<Harness state={{ isLoading: false, isError: false, data: rows }} onSort={(s) => seen.push(s)} />));
    const btn = [...dom.host.querySelectorAll("th button")].find((b) => b.textContent?.startsWith("raw_reward"))!;
    act(() => (btn as HTMLButtonElement).click());
    expect(seen.at(-1)).toEqual([{ id: "raw_reward", desc: true }]);
    expect(bodyRows()[0]!.querySelectorAll("td")[1]!.textContent).toBe("1");
    act(() => (btn as HTMLButtonElement).click());
    expect(bodyRows()[0]!.querySelectorAll("td")[1]!.textContent).toBe("0");
    expect(dom.host.querySelector("th[aria-sort=ascending]")?.textContent).toContain("raw_reward");
  });

  it("filters with the column grammar and reports the match count", () => {
    act(() => dom.root.render(<Harness state={{ isLoading: false, isError: false, data: rows }} />));
    const input = dom.host.querySelector<HTMLInputElement>("input[aria-label='Filter status']")!;
    act(() => {
      // React tracks input values: set through the prototype setter so the change event counts.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
      setter.call(input, "trunc");
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    expect(dom.host.querySelector("[data-testid=dt-count]")?.textContent).toBe(`${rows.filter((r) => r.status === "truncated").length} of 5000 rows`);
  });

  it("shows loading and the server's error message", () => {
    act(() => dom.root.render(<Harness state={{ isLoading: true, isError: false, data: undefined }} />));
    expect(dom.host.textContent).toContain("loading…");
    act(() => dom.root.render(<Harness state={{ isLoading: false, isError: true, data: undefined, error: new Error("this run's trajectories are restricted") }} />));
    expect(dom.host.querySelector("[role=alert]")?.textContent).toContain("restricted");
  });
  it("downloads the filtered, sorted rows and visible columns as CSV", async () => {
    const saved: Blob[] = [];
    let name = "";
    const urlDesc = Object.getOwnPropertyDescriptor(URL, "createObjectURL");
    const clickDesc = Object.getOwnPropertyDescriptor(HTMLAnchorElement.prototype, "click");
    Object.defineProperty(URL, "createObjectURL", { configurable: true, value: (b: Blob) => (saved.push(b), "blob:test") });
    Object.defineProperty(HTMLAnchorElement.prototype, "click", {
      configurable: true,
      value: function (this: HTMLAnchorElement) {
        name = this.download;
      },
    });
    try {
      const data: Row[] = [
        { sample_index: 0, raw_reward: 0.5, status: "completed" },
        { sample_index: 1, raw_reward: null, status: 'trunc, "cut"' },
        { sample_index: 2, raw_reward: 1, status: "completed" },
      ];
      act(() => dom.root.render(<Harness state={{ isLoading: false, isError: false, data }} />));
      const input = dom.host.querySelector<HTMLInputElement>("input[aria-label='Filter sample_index']")!;
      act(() => {
        // eslint-disable-next-line @typescript-eslint/unbound-method
        const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
        setter.call(input, ">0");
        input.dispatchEvent(new Event("input", { bubbles: true }));
      });
      act(() => dom.host.querySelector<HTMLButtonElement>("button[aria-label='Download Samples as CSV']")!.click());
      expect(name).toBe("Samples.csv");
      const text = await new Promise<string>((resolve) => {
        const fr = new FileReader(); // jsdom's Blob has no text()
        fr.onload = () => resolve(typeof fr.result === "string" ? fr.result : "");
        fr.readAsText(saved[0]!);
      });
      expect(text).toBe('sample_index,raw_reward,status\n1,,"trunc, ""cut"""\n2,1,completed\n');
    } finally {
      if (urlDesc) Object.defineProperty(URL, "createObjectURL", urlDesc);
      else delete (URL as { createObjectURL?: unknown }).createObjectURL;
      if (clickDesc) Object.defineProperty(HTMLAnchorElement.prototype, "click", clickDesc);
    }
  });
});
