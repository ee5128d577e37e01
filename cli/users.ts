/**
 * `npm run users -- <command>`: manage who can sign in.
 *   add NAME [--admin] --password-stdin     list     remove NAME
 *   passwd NAME --password-stdin            token NAME (prints the token as the last line)
 *   revoke-tokens NAME
 *   restrict RUN_ID [--allow NAME ...]       unrestrict RUN_ID       access RUN_ID
 * Every command takes --data-dir (or RLBOARD_DATA_DIR).
 */
import { openDatabase } from "@/lib/server/db";
import {
  addUser,
  createToken,
  listTokens,
  listUsers,
  removeUser,
  revokeTokens,
  setPassword,
  UserError,
} from "@/lib/server/auth/users";
import { passwordProblem } from "@/lib/server/auth/passwords";
import { describeAccess, isRestricted, knownRun, restrictRun, RunAccessError, unrestrictRun } from "@/lib/server/auth/run-access";
import { fail, parseCli, readStdin, resolveDataDir } from "./common";

const HELP = `usage: npm run users -- <command> [--data-dir DIR]
  add NAME [--admin] --password-stdin   create a user (password read from stdin)
  list                                  list users
  remove NAME                           delete a user
  passwd NAME --password-stdin          set a new password
  token NAME                            create an API token (printed once, last line)
  revoke-tokens NAME                    revoke all of a user's tokens and end their sessions
  restrict RUN_ID [--allow NAME ...]    only admins and the listed users may read the run's
                                        trajectories (replaces the previous list)
  unrestrict RUN_ID                     every signed-in user may read them again
  access RUN_ID                         print who may read the run's trajectories`;

async function main(): Promise<void> {
  const { values, positionals } = parseCli(
    process.argv.slice(2),
    {
      "data-dir": { type: "string" },
      admin: { type: "boolean", default: false },
      "password-stdin": { type: "boolean", default: false },
      allow: { type: "string", multiple: true, default: [] },
      help: { type: "boolean", short: "h", default: false },
    },
    true,
  );
  const [cmd, name, ...extra] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(HELP + "\n");
    process.exit(cmd || values.help ? 0 : 2);
  }
  if (extra.length) fail(`unexpected argument '${extra[0]}'`, 2);
  const runCommand = cmd === "restrict" || cmd === "unrestrict" || cmd === "access";
  if (cmd !== "list" && !name) fail(`'${cmd}' needs ${runCommand ? "a run id (as listed by GET /api/runs)" : "a user name"}`, 2);
  if (!runCommand && values.allow.length) fail("--allow goes with 'restrict'", 2);
  const db = openDatabase(resolveDataDir(values["data-dir"]));
  const password = async () => {
    if (!values["password-stdin"]) fail(`'${cmd}' reads the password from stdin: pass --password-stdin`, 2);
    const pw = (await readStdin()).replace(/\r?\n$/, "");
    const problem = passwordProblem(pw);
    if (problem) fail(problem);
    return pw;
  };
  try {
    switch (cmd) {
      case "add": {
        const user = await addUser(db, name!, await password(), values.admin ? "admin" : "member");
        process.stdout.write(`added ${user.role} '${user.name}'\n`);
        break;
      }
      case "list":
        for (const u of listUsers(db)) {
          const tokens = listTokens(db, u.name).length;
          process.stdout.write(`${u.name}\t${u.role}\t${u.provider}\t${tokens} token(s)\n`);
        }
        break;
      case "remove":
        removeUser(db, name!);
        process.stdout.write(`removed '${name}'\n`);
        break;
      case "passwd":
        await setPassword(db, name!, await password());
        process.stdout.write(`password changed for '${name}'\n`);
        break;
      case "token": {
        const token = createToken(db, name!);
        process.stdout.write(`API token for '${name}' (shown once; send as 'Authorization: Bearer <token>'):\n${token}\n`);
        break;
      }
      case "revoke-tokens":
        process.stdout.write(`revoked ${revokeTokens(db, name!)} token(s) of '${name}'\n`);
        break;
      case "restrict": {
        if (!knownRun(db, name!)) process.stderr.write(`rlboard: note: run '${name}' is not in the server's run index yet; restricting it anyway\n`);
        restrictRun(db, name!, values.allow);
        const who = values.allow.length ? `admins and ${values.allow.map((n) => `'${n}'`).join(", ")}` : "admins only";
        process.stdout.write(`restricted '${name}': trajectories readable by ${who}\n`);
        break;
      }
      case "unrestrict":
        if (!isRestricted(db, name!)) process.stdout.write(`'${name}' was not restricted\n`);
        else {
          unrestrictRun(db, name!);
          process.stdout.write(`unrestricted '${name}': every signed-in user may read its trajectories\n`);
        }
        break;
      case "access":
        for (const line of describeAccess(db, name!)) process.stdout.write(`${line}\n`);
        break;
      default:
        fail(`unknown command '${cmd}'\n${HELP}`, 2);
    }
  } catch (err) {
    if (err instanceof UserError || err instanceof RunAccessError) fail(err.message);
    throw err;
  } finally {
    db.close();
  }
}

void main();
