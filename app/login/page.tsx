import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/auth/LoginForm";
import { safeNextPath } from "@/lib/server/auth/next-path";
import { configuredProviders } from "@/lib/server/auth/nextauth";
import { currentPageUser } from "@/lib/server/session";
import { oidcLoginAction } from "@/lib/actions/auth";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const next = safeNextPath(typeof sp.next === "string" ? sp.next : "/");
  if (await currentPageUser()) redirect(next);
  const providers = configuredProviders();
  return (
    <div className="login-wrap">
      <div className="panel login-card">
        <div className="brand">
          rl<span>board</span>
        </div>
        <p className="muted" style={{ margin: 0 }}>
          Sign in to see your lab&apos;s RL runs.
        </p>
        <LoginForm next={next} />
        {providers.map((p) => (
          <form key={p.id} action={oidcLoginAction}>
            <input type="hidden" name="provider" value={p.id} />
            <input type="hidden" name="next" value={next} />
            <button className="btn" type="submit" style={{ width: "100%" }}>
              Sign in with {p.name}
            </button>
          </form>
        ))}
      </div>
    </div>
  );
}
