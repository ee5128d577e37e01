import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { RestrictionForms, UserForms } from "@/components/admin/AdminPanels";
import { formatUtc } from "@/lib/format/time";
import { getDb } from "@/lib/server/db";
import { listRestrictions, recentAudit } from "@/lib/server/auth/run-access";
import { listTokens, listUsers } from "@/lib/server/auth/users";
import { getPageRuns } from "@/lib/server/runs/page-run";

export const metadata: Metadata = { title: "Admin" };
export const dynamic = "force-dynamic";

export default async function AdminPage() {
  const { user: me, runs: runList } = await getPageRuns("/admin");
  if (me.role !== "admin") notFound();
  const db = getDb();
  const users = listUsers(db);
  const audit = recentAudit(db, 100);
  const restrictions = listRestrictions(db);
  const runs = runList.runs.map((r) => ({ id: r.id, name: r.name }));
  return (
    <main className="page">
      <h1>Admin</h1>
      <p className="muted" style={{ margin: 0 }}>
        Users, API tokens, restricted runs and the trajectory audit. The same operations are available as{" "}
        <code>npm run users -- …</code>.
      </p>
      <div className="admin-grid">
        <section className="panel" aria-labelledby="users-h">
          <h2 id="users-h">Users</h2>
          <table className="kv">
            <thead>
              <tr>
                <th>Name</th>
                <th>Role</th>
                <th>Sign-in</th>
                <th>Tokens</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id}>
                  <td>{u.name}</td>
                  <td>{u.role}</td>
                  <td>{u.provider}</td>
                  <td>{listTokens(db, u.name).length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className="panel">
          <UserForms users={users.map((u) => u.name)} />
        </section>
        <section className="panel" aria-labelledby="restrict-h">
          <h2 id="restrict-h">Restricted runs</h2>
          <p className="muted">
            Conversations and tokens of a restricted run are readable only by admins and the users listed. Metrics and
            timelines stay visible.
          </p>
          <RestrictionForms runs={runs} />
          <table className="kv">
            <tbody>
              {restrictions.length === 0 ? (
                <tr>
                  <td className="muted">No restricted runs.</td>
                </tr>
              ) : (
                restrictions.map((r) => (
                  <tr key={r.run_id}>
                    <td className="mono">{r.run_id}</td>
                    <td>{r.members.length ? r.members.join(", ") : <span className="muted">admins only</span>}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </section>
        <section className="panel" aria-labelledby="audit-h">
          <h2 id="audit-h">Trajectory audit (latest 100)</h2>
          <table className="kv" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>User</th>
                <th>Run</th>
                <th>Step</th>
                <th>Sample</th>
                <th>View</th>
              </tr>
            </thead>
            <tbody>
              {audit.length === 0 ? (
                <tr>
                  <td colSpan={6} className="muted">
                    Nobody has opened a sample yet.
                  </td>
                </tr>
              ) : (
                audit.map((a, i) => (
                  <tr key={i}>
                    <td>{formatUtc(a.at)}</td>
                    <td>{a.user_name}</td>
                    <td className="mono">{a.run_id}</td>
                    <td>{a.step}</td>
                    <td>{a.sample}</td>
                    <td>{a.kind}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </section>
      </div>
    </main>
  );
}
