import { Link } from "@/components/shell/Link";
import { logoutAction } from "@/lib/actions/auth";
import { NavLinks } from "@/components/shell/NavLinks";
import { ThemeToggle } from "@/components/shell/ThemeToggle";

export interface TopBarProps {
  user: { name: string; role: "admin" | "member" };
}

export function TopBar({ user }: TopBarProps) {
  return (
    <header className="topbar">
      <Link href="/" className="brand" aria-label="rlboard home">
        rl<span>board</span>
      </Link>
      <NavLinks isAdmin={user.role === "admin"} />
      <div className="topbar-right">
        <ThemeToggle />
        <span>
          signed in as <strong>{user.name}</strong>
          {user.role === "admin" ? " (admin)" : ""}
        </span>
        <form action={logoutAction}>
          <button className="btn" type="submit">
            Sign out
          </button>
        </form>
      </div>
    </header>
  );
}
