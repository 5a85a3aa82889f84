/** Asking before a command does what cannot be undone (`app delete`, `group delete`). */
import { ConfigError } from '../config.js';

/** Asks a yes/no question on the terminal; true only for "y" or "yes". */
export async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

/**
 * Unless `--yes` was given: asks `question` on the terminal (throwing "Nothing was deleted." on any
 * answer but yes), or refuses where nobody can answer (a script, a pipe), saying to add --yes.
 */
export async function confirmDelete(yes: boolean, command: string, what: string, question: () => Promise<string>): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY) {
    throw new ConfigError(`gatehouse ${command} asks before it deletes, and there is no terminal to ask on: add --yes to delete ${what}.`);
  }
  if (!(await confirm(await question()))) throw new ConfigError('Nothing was deleted.');
}
