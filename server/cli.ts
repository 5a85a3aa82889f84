#!/usr/bin/env node
/**
 * The `gatehouse` command line: `serve`, `admin-token`, the operations commands and headless
 * administration through the admin API (`app`, `invite`, `member`, `key`). Bad
 * configuration or usage prints one sentence and exits 1 — never a stack trace.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './config.js';
import type { Command, CommandEntry } from './cli/command.js';
import { commands } from './cli/commands.js';
import { applyLaunchSettings } from './cli/launch.js';

function list(entries: CommandEntry[]): string[] {
  const width = Math.max(14, ...entries.map((c) => c.name.length + 2));
  return entries.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
}

function usage(): string {
  return ['Usage: gatehouse <command> [flags]', '', 'Commands:', ...list(commands), '', 'Run `gatehouse <command> --help` for its flags.'].join('\n');
}

/** `gatehouse app` (a group without a sub-command): its commands. */
function groupHelp(group: string, entries: CommandEntry[]): string {
  return [`Usage: gatehouse ${group} <command> [flags]`, '', 'Commands:', ...list(entries), '', `Run \`gatehouse ${group} <command> --help\` for its flags.`].join('\n');
}

function commandHelp(entry: CommandEntry, command: Command): string {
  const head = `Usage: gatehouse ${entry.name}${command.positionals ? ` ${command.positionals}` : ''} [flags]`;
  const width = Math.max(24, ...command.help.map(([flag]) => flag.length + 2));
  const flags = command.help.map(([flag, text]) => `  ${flag.padEnd(width)}${text}`);
  return [head, '', entry.summary, '', 'Flags:', ...flags, `  ${'--help'.padEnd(width)}show this help`].join('\n');
}

/**
 * node:util's parseArgs message as sentences ending in a full stop, without its hint about
 * positionals after `--` (which is about its own syntax, not this command's).
 */
function parseErrorSentence(message: string): string {
  const text = message.split('\n')[0]!.replace(/\.?\s*To specify a positional argument.*$/, '').trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The command named by the first words of argv (`app create …` before `app …`), and the rest. */
function findCommand(argv: string[]): { entry: CommandEntry; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const entry = commands.find((c) => c.name === name);
    if (entry && argv.length >= words) return { entry, rest: argv.slice(words) };
  }
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...others] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 1;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = commands.filter((c) => c.name.startsWith(`${name} `));
    if (group.length > 0) {
      const sub = others[0];
      if (sub === undefined || sub === '--help' || sub === '-h') {
        console.log(groupHelp(name, group));
        return sub === undefined ? 1 : 0;
      }
      console.error(`Unknown command "${name} ${sub}". Run \`gatehouse ${name} --help\` for the list.`);
      return 1;
    }
    console.error(`Unknown command "${name}". Run \`gatehouse --help\` for the list.`);
    return 1;
  }
  const { entry, rest } = found;
  // The long-running server sets its V8 and malloc settings on itself before its code is loaded
  // (one process: no launcher re-runs it with flags).
  if (entry.name === 'serve') applyLaunchSettings();
  const command = await entry.load();
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: Boolean(command.positionals),
      strict: true,
    });
  } catch (error) {
    console.error(`${parseErrorSentence((error as Error).message)} Run \`gatehouse ${entry.name} --help\` for its flags.`);
    return 1;
  }
  if (parsed.values.help) {
    console.log(commandHelp(entry, command));
    return 0;
  }
  const code = await command.run(parsed.values, parsed.positionals);
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
