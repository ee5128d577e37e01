"use client";

import {
  addUserAction,
  createTokenAction,
  removeUserAction,
  restrictRunAction,
  revokeTokensAction,
  setPasswordAction,
  setRoleAction,
  unrestrictRunAction,
} from "@/lib/actions/admin";
import { ActionForm } from "@/components/admin/ActionForm";

export function UserForms({ users }: { users: string[] }) {
  const userSelect = (
    <select className="input" name="name" aria-label="User" required defaultValue="">
      <option value="" disabled>
        user…
      </option>
      {users.map((u) => (
        <option key={u} value={u}>
          {u}
        </option>
      ))}
    </select>
  );
  return (
    <>
      <h2>Add a user</h2>
      <ActionForm action={addUserAction} label="Add user">
        <input className="input" name="name" placeholder="name" aria-label="New user name" required />
        <input className="input" name="password" type="password" placeholder="password (8+ chars)" aria-label="New user password" minLength={8} required />
        <select className="input" name="role" aria-label="Role" defaultValue="member">
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
      </ActionForm>
      <h2 style={{ marginTop: 18 }}>Manage a user</h2>
      <ActionForm action={createTokenAction} label="Create API token">
        {userSelect}
      </ActionForm>
      <ActionForm action={revokeTokensAction} label="Revoke tokens">
        {userSelect}
      </ActionForm>
      <ActionForm action={setPasswordAction} label="Set password">
        {userSelect}
        <input className="input" name="password" type="password" placeholder="new password" aria-label="New password" minLength={8} required />
      </ActionForm>
      <ActionForm action={setRoleAction} label="Set role">
        {userSelect}
        <select className="input" name="role" aria-label="New role" defaultValue="member">
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
      </ActionForm>
      <ActionForm action={removeUserAction} label="Remove user">
        {userSelect}
      </ActionForm>
    </>
  );
}

export function RestrictionForms({ runs }: { runs: { id: string; name: string }[] }) {
  const runSelect = (
    <select className="input" name="run" aria-label="Run" required defaultValue="">
      <option value="" disabled>
        run…
      </option>
      {runs.map((r) => (
        <option key={r.id} value={r.id}>
          {r.name} ({r.id})
        </option>
      ))}
    </select>
  );
  return (
    <>
      <ActionForm action={restrictRunAction} label="Restrict">
        {runSelect}
        <input className="input" name="members" placeholder="allowed users (comma separated)" aria-label="Allowed users" />
      </ActionForm>
      <ActionForm action={unrestrictRunAction} label="Unrestrict">
        {runSelect}
      </ActionForm>
    </>
  );
}
