/**
 * View state that lives in the URL so a filtered, sorted table is a shareable link
 * (docs/views.md 9 #3/#38):
 *   sort=col:desc,col2:asc   f=col:expr (repeated)   cols=a,b,c   tab=samples|groups
 *   anat=submit|staleness|…  (batch-anatomy order)
 * Parsers are lenient: an unknown column or a malformed item is dropped, never thrown.
 */
export interface SortItem {
  id: string;
  desc: boolean;
}
export interface FilterItem {
  id: string;
  value: string;
}

export function parseSort(raw: string | null, known?: readonly string[]): SortItem[] {
  if (!raw) return [];
  const out: SortItem[] = [];
  for (const part of raw.split(",")) {
    const [id, dir] = part.split(":");
    if (!id || (known && !known.includes(id)) || out.some((s) => s.id === id)) continue;
    out.push({ id, desc: dir === "desc" });
  }
  return out;
}

export function serializeSort(sort: readonly SortItem[]): string | null {
  return sort.length ? sort.map((s) => `${s.id}:${s.desc ? "desc" : "asc"}`).join(",") : null;
}

export function parseFilters(values: readonly string[], known?: readonly string[]): FilterItem[] {
  const out: FilterItem[] = [];
  for (const v of values) {
    const i = v.indexOf(":");
    if (i <= 0) continue;
    const id = v.slice(0, i);
    const value = v.slice(i + 1);
    if (!value.trim() || (known && !known.includes(id))) continue;
    const prev = out.findIndex((f) => f.id === id);
    if (prev >= 0) out.splice(prev, 1);
    out.push({ id, value });
  }
  return out;
}

export function serializeFilters(filters: readonly FilterItem[]): string[] {
  return filters.filter((f) => f.value.trim() !== "").map((f) => `${f.id}:${f.value}`);
}

export function parseColumns(raw: string | null, known: readonly string[]): string[] | null {
  if (raw === null) return null;
  const cols = raw.split(",").filter((c) => known.includes(c));
  return cols.length ? cols : null;
}
