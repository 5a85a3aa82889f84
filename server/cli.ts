#!/usr/bin/env node
/**
 * The `gatehouse` command line: `serve`, `admin-token`, and the operations commands. Bad
 * configuration or usage prints one sentence and exits 1 — never a stack trace.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './config.js';
import type { Command } from './cli/command.js';
import { commands } from './cli/commands.js';

function usage(): string {
  const lines = ['Usage: gatehouse <command> [flags]', '', 'Commands:'];
  for (const c of commands) lines.push(`  ${c.name.padEnd(14)}${c.summary}`);
  lines.push('', 'Run `gatehouse <command> --help` for its flags.');
  return lines.join('\n');
}

function commandHelp(command: Command): string {
  const head = `Usage: gatehouse ${command.name}${command.positionals ? ` ${command.positionals}` : ''} [flags]`;
  const flags = command.help.map(([flag, text]) => `  ${flag.padEnd(24)}${text}`);
  return [head, '', command.summary, '', 'Flags:', ...flags, `  ${'--help'.padEnd(24)}show this help`].join('\n');
}

/**
 * node:util's parseArgs message as sentences ending in a full stop, without its hint about
 * positionals after `--` (which is about its own syntax, not this command's).
 */
function parseErrorSentence(message: string): string {
  const text = message.split('\n')[0]!.replace(/\.?\s*To specify a positional argument.*$/, '').trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 1;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    console.error(`Unknown command "${name}". Run \`gatehouse --help\` for the list.`);
    return 1;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: Boolean(command.positionals),
      strict: true,
    });
  } catch (error) {
    console.error(`${parseErrorSentence((error as Error).message)} Run \`gatehouse ${name} --help\` for its flags.`);
    return 1;
  }
  if (parsed.values.help) {
    console.log(commandHelp(command));
    return 0;
  }
  const code = await command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
  return code ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message);
    else console.error(`gatehouse: ${(error as Error)?.message ?? String(error)}`);
    process.exit(1);
  },
);
