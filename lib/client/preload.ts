import { preload } from "react-dom";

/**
 * During the server render only: `<link rel=preload as=fetch>` for the API answers the
 * view's hooks will request first, so the browser fetches them while it still loads the
 * page's JavaScript. The URLs must be built by the same functions the hooks use (a fetch
 * reuses a preload only for the identical URL), and stay few: HTTP/1.1 gives a page six
 * connections, and the scripts must not queue behind data.
 */
export function preloadData(urls: readonly string[]): void {
  if (typeof window !== "undefined") return;
  for (const u of urls) preload(u, { as: "fetch", crossOrigin: "anonymous" });
}
