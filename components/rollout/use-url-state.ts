"use client";
/**
 * View state in the URL without a server round trip: `replace` patches the query with
 * history.replaceState (Next keeps useSearchParams in sync), so sort/filter/tab changes
 * make a shareable link but no history entry; navigation between steps and samples
 * uses the router (one entry each).
 */
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback } from "react";
import { patchSearch } from "@/lib/rollout-view/url-state";

export function useUrlState() {
  const params = useSearchParams();
  const pathname = usePathname();
  const replace = useCallback(
    (patch: Record<string, string | readonly string[] | null>) => {
      const q = patchSearch(window.location.search, patch);
      const qs = q.toString();
      window.history.replaceState(null, "", qs ? `${pathname}?${qs}` : pathname);
    },
    [pathname],
  );
  return { params, replace };
}
