import { handlers } from "@/lib/server/auth/nextauth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST } = handlers;
