/**
 * Shared CLI plumbing: strict flag parsing (an unknown flag is one clear line + exit 2),
 * the data dir (--data-dir, else RLBOARD_DATA_DIR, else ./data), and fatal errors.
 */
import path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";

export class CliError extends Error {}

export function fail(message: string, code = 1): never {
  process.stderr.write(`rlboard: ${message}\n`);
  process.exit(code);
}

export function parseCli<T extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (err) {
    fail(`${(err as Error).message.split("\n")[0]} (see --help)`, 2);
  }
}

export function resolveDataDir(flag: string | undefined): string {
  return path.resolve(flag ?? process.env.RLBOARD_DATA_DIR ?? "./data");
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
