"use client";

/**
 * `next/link` that prefetches on intent (hover, focus) instead of on sight. A run page
 * shows dozens of links (tabs, step navigation, one per visible sample row), and Next's
 * viewport prefetch would render every one of their pages on the server while the view's
 * own data requests are waiting in the same queue. Hovering still warms the target, so a
 * click stays instant.
 */
import NextLink from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

export function Link({ href, onMouseEnter, onFocus, prefetch, ...rest }: ComponentProps<typeof NextLink>) {
  const router = useRouter();
  const url = typeof href === "string" ? href : null;
  const warm = () => {
    if (prefetch !== false && url !== null && url.startsWith("/")) router.prefetch(url);
  };
  return (
    <NextLink
      {...rest}
      href={href}
      prefetch={false}
      onMouseEnter={(e) => {
        warm();
        onMouseEnter?.(e);
      }}
      onFocus={(e) => {
        warm();
        onFocus?.(e);
      }}
    />
  );
}
