import type { Metadata } from "next";
import { CompareView } from "@/components/compare/CompareView";
import { getPageCompare } from "@/lib/server/runs/page-compare";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Compare runs" };

type Search = Promise<Record<string, string | string[] | undefined>>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));

export default async function ComparePage({ searchParams }: { searchParams: Search }) {
  const sp = await searchParams;
  const runs = one(sp.runs);
  const { report, error, live } = await getPageCompare(runs, one(sp.view), one(sp.x));
  return <CompareView runs={runs} initial={report} error={error} live={live} />;
}
