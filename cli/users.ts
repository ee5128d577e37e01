/**
 * `npm run users -- <command>`: manage who can sign in.
 *   add NAME [--admin] --password-stdin     list     remove NAME
 *   passwd NAME --password-stdin            token NAME (prints the token as the last line)
 *   revoke-tokens NAME
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
import { fail, parseCli, readStdin, resolveDataDir } from "./common";

const HELP = `usage: npm run users -- <command> [--data-dir DIR]
  add NAME [--admin] --password-stdin   create a user (password read from stdin)
  list                                  list users
  remove NAME                           delete a user
  passwd NAME --password-stdin          set a new password
  token NAME                            create an API token (printed once, last line)
  revoke-tokens NAME                    revoke all of a user's tokens`;

async function main(): Promise<void> {
  const { values, positionals } = parseCli(
    process.argv.slice(2),
    {
      "data-dir": { type: "string" },
      admin: { type: "boolean", default: false },
      "password-stdin": { type: "boolean", default: false },
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
  const needsName = cmd !== "list";
  if (needsName && !name) fail(`'${cmd}' needs a user name`, 2);
  const db = openDatabase(resolveDataDir(values["data-dir"]));
  const password = async () => {
    if (!values["password-stdin"]) fail(`'${cmd}' reads the password from stdin: pass --password-stdin`, 2);
    const pw = (await readStdin()).replace(/\r?\n$/, "");
    if (pw.length < 8) fail("password must be at least 8 characters");
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
      default:
        fail(`unknown command '${cmd}'\n${HELP}`, 2);
    }
  } catch (err) {
    if (err instanceof UserError) fail(err.message);
    throw err;
  } finally {
    db.close();
  }
}

void main();
