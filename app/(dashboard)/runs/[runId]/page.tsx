import { redirect } from "next/navigation";

export default async function RunIndex({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  redirect(`/runs/${runId}/metrics`);
}
