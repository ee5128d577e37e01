"use client";

/**
 * The one URL-state hook of every view. View state lives in the URL. Writes go through the
 * History API so a zoom, a chip, a sort or a filter does not re-run the server components:
 * "push" for deliberate choices the Back button should undo (category, lanes), "replace"
 * for continuous ones (zoom, pan, typing, table state). Navigation to another page (a
 * step, a sample) uses the router.
 *
 * Reads come from the address bar itself (external system: window.location, updated by our
 * writes and by Back/Forward), with Next's useSearchParams as the server/hydration value.
 * Next's own search-params state can lag behind entries written with replaceState when
 * the user goes Back, so it is not trusted after hydration.
 */
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useMemo, useSyncExternalStore } from "react";
import { patchSearch } from "@/lib/charts/core/url";

export type HistoryMode = "push" | "replace";

const subscribers = new Set<() => void>();

function subscribe(fn: () => void): () => void {
  subscribers.add(fn);
  window.addEventListener("popstate", fn);
  return () => {
    subscribers.delete(fn);
    window.removeEventListener("popstate", fn);
  };
}

function currentSearch(): string {
  return window.location.search.replace(/^\?/, "");
}

export interface UrlState {
  params: URLSearchParams;
  /** Write a whole query (`?a=1`, or "" for none). */
  write: (query: string, mode: HistoryMode) => void;
  /** Set (string), replace (array) or remove (null) keys of the current query, without a history entry. */
  replace: (patch: Record<string, string | readonly string[] | null>) => void;
}

/** The address bar shows `pathname` (raw or percent-decoded). */
function addressBarIsAt(pathname: string): boolean {
  const here = window.location.pathname;
  if (here === pathname) return true;
  try {
    return decodeURI(here) === decodeURI(pathname);
  } catch {
    return false;
  }
}

export function useUrlState(): UrlState {
  const ssr = useSearchParams().toString();
  const pathname = usePathname();
  // Right after a router navigation (a login's redirect to the deep link, a Link), the new
  // page renders before Next writes its URL to the address bar: until the bar shows this
  // page, Next's params are the truth (else `?lanes=` would read as absent, #15 defect 1).
  const snapshot = useCallback(() => (addressBarIsAt(pathname) ? currentSearch() : ssr), [pathname, ssr]);
  const search = useSyncExternalStore(subscribe, snapshot, () => ssr);
  const write = useCallback(
    (query: string, mode: HistoryMode) => {
      const url = `${pathname}${query}${window.location.hash}`;
      if (url === `${window.location.pathname}${window.location.search}${window.location.hash}`) return;
      if (mode === "push") window.history.pushState(null, "", url);
      else window.history.replaceState(null, "", url);
      for (const fn of subscribers) fn();
    },
    [pathname],
  );
  const replace = useCallback(
    (patch: Record<string, string | readonly string[] | null>) => {
      const qs = patchSearch(currentSearch(), patch).toString();
      write(qs ? `?${qs}` : "", "replace");
    },
    [write],
  );
  const params = useMemo(() => new URLSearchParams(search), [search]);
  return { params, write, replace };
}

/** Current params straight from the address bar (for writers that run between renders). */
export function currentParams(): URLSearchParams {
  return new URLSearchParams(window.location.search);
}
