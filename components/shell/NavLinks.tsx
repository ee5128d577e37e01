"use client";

import { Link } from "@/components/shell/Link";
import { usePathname } from "next/navigation";

export function NavLinks({ isAdmin }: { isAdmin: boolean }) {
  const path = usePathname();
  const current = (match: boolean) => (match ? ("page" as const) : undefined);
  return (
    <nav className="topnav" aria-label="Main">
      <Link href="/" aria-current={current(path === "/" || path.startsWith("/runs"))}>
        Runs
      </Link>
      {isAdmin ? (
        <Link href="/admin" aria-current={current(path.startsWith("/admin"))}>
          Admin
        </Link>
      ) : null}
    </nav>
  );
}
