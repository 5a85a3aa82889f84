/**
 * `gatehouse setup --email … --name …`: first run without a browser (spec
 * administrators-and-people.md, "First run"). Creates the owner through the running server's
 * admin API (`POST /api/admin/setup/owner`, with the local admin token), so the password policy
 * and the audit log apply as for the panel. The password is asked on the terminal without echo,
 * or read from standard input when that is not a terminal (scripts: `printf '%s\n' "$PW" |
 * gatehouse setup …`); never from a flag, which other users could see in `ps`. The second factor
 * is enrolled at the owner's first sign-in to the panel.
 */
import { ConfigError } from '../../config.js';
import { adminCommand } from '../admin-client.js';
import type { FlagTable } from '../flags.js';
import { printJson } from '../output.js';

const setupFlags: FlagTable = {
  email: { type: 'string', value: 'EMAIL', help: "the owner's e-mail address (required)" },
  name: { type: 'string', value: 'NAME', help: "the owner's name (required)" },
};

/** One line from a non-terminal standard input (a script's pipe). */
async function lineFromStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** Characters typed after the Enter that ended the last answer (a paste of both answers at once). */
let typedAhead = '';

/** Asks on the terminal with echo off (raw mode), reading until Enter; Ctrl-C aborts. */
function askHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const input = process.stdin;
    // Echo off before the prompt shows: what is typed after it never reaches the screen.
    input.setRawMode(true);
    process.stderr.write(prompt);
    let value = '';
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const take = (chunk: string): boolean => {
      for (let i = 0; i < chunk.length; i++) {
        const ch = chunk[i]!;
        if (ch === '\r' || ch === '\n') {
          typedAhead = chunk.slice(i + 1).replace(/^\n/, '');
          done();
          return true;
        }
        if (ch === '\u0003') {
          done(new ConfigError('Set-up cancelled.'));
          return true;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
      return false;
    };
    const onData = (chunk: string) => void take(chunk);
    input.setEncoding('utf8');
    input.on('data', onData);
    const ahead = typedAhead;
    typedAhead = '';
    if (!take(ahead)) input.resume();
  });
}

async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return lineFromStdin();
  const first = await askHidden('Password for the owner: ');
  const again = await askHidden('The same password again: ');
  if (first !== again) throw new ConfigError('The two passwords differ; run `gatehouse setup` again.');
  return first;
}

export const setup = adminCommand({
  flags: setupFlags,
  async run({ client, values, json }) {
    const email = typeof values.email === 'string' ? values.email : '';
    const name = typeof values.name === 'string' ? values.name : '';
    if (!email || !name) throw new ConfigError('Give the owner\'s --email and --name, e.g. `gatehouse setup --email ann@example.com --name "Ann Lee"`.');
    const password = await readPassword();
    if (!password) throw new ConfigError('No password was given (type it when asked, or pipe it on standard input).');
    const answer = await client.request<{ user: { id: string; email: string; name: string | null } }>('POST', '/api/admin/setup/owner', { email, name, password });
    if (json) return printJson(answer);
    console.log(`Created the owner ${answer.user.email} (${answer.user.id}).`);
    console.log(`Open ${client.url}/admin/ and choose "Sign in with Gatehouse": the first sign-in sets up a second factor.`);
  },
});
