import type { ReactNode } from "react";
import { QueryProvider } from "@/components/providers/QueryProvider";
import { TopBar } from "@/components/shell/TopBar";
import { requirePageUser } from "@/lib/server/session";

export const dynamic = "force-dynamic";

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  return (
    <QueryProvider>
      <TopBar user={user} />
      {children}
    </QueryProvider>
  );
}
