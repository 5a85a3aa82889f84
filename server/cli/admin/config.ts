/**
 * `gatehouse config export | apply`: configuration as code through the running server's admin API
 * (`GET /api/admin/config`, `POST /api/admin/config/apply`; docs/configuration-as-code.md).
 *
 * `apply` resolves the file's secret references itself — `${NAME}` from this command's
 * environment, `file:PATH` relative to the file (or absolute) — and sends their values with the
 * file; the server reports what could not be resolved by line, with every other problem. With
 * `--prune` it shows what would be deleted and asks first (`--yes` skips the question).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { ConfigError } from '../../config.js';
import { adminCommand, ApiError } from '../admin-client.js';
import type { FlagTable } from '../flags.js';
import { printJson } from '../output.js';
import { confirmDelete } from '../confirm.js';
import { referencesIn, resolveLocally } from '../../config-as-code/references.js';

interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
  secret?: boolean;
}
interface PlanItem {
  action: 'create' | 'update' | 'delete';
  kind: string;
  id: string;
  changes: FieldChange[];
}
interface ApplyAnswer {
  dryRun: boolean;
  plan: PlanItem[];
  secrets: { path: string; value: string }[];
}

const exportFlags: FlagTable = {
  out: { type: 'string', short: 'o', value: 'FILE', help: 'write the document to FILE (default: print it)' },
};

export const configExport = adminCommand({
  flags: exportFlags,
  async run({ client, values }) {
    const text = await client.text('GET', '/api/admin/config');
    const out = values.out as string | undefined;
    if (!out) return void process.stdout.write(text);
    writeFileSync(out, text, { mode: 0o600 });
    console.log(`Wrote the configuration to ${out}.`);
  },
});

const applyFlags: FlagTable = {
  'dry-run': { type: 'boolean', help: 'show the plan and check every change, change nothing' },
  prune: { type: 'boolean', help: 'also delete what a section of the file leaves out (asks first)' },
  yes: { type: 'boolean', short: 'y', help: 'with --prune: delete without asking (needed when there is no terminal to ask on)' },
};

/** `"x"` for a value in a plan line; a secret's references as they are. */
const shown = (value: unknown) => (value === undefined ? '(unset)' : JSON.stringify(value));

function planLines(plan: PlanItem[]): string[] {
  const lines: string[] = [];
  for (const item of plan) {
    lines.push(`${item.action} ${item.kind} ${item.id}`);
    if (item.action !== 'update') continue;
    for (const change of item.changes) {
      const text = !change.secret
        ? `${shown(change.before)} → ${shown(change.after)}`
        : change.before === change.after
          ? `(secret) a new value from ${String(change.after)}`
          : `(secret) ${change.before === null ? 'not set by a file' : String(change.before)} → ${String(change.after)}`;
      lines.push(`    ${change.field}: ${text}`);
    }
  }
  return lines;
}

/** "1 to create, 0 to update, 2 to delete" (or with `words` "created", …). */
function summary(plan: PlanItem[], words: [string, string, string] = ['to create', 'to update', 'to delete']): string {
  const count = (action: PlanItem['action']) => plan.filter((p) => p.action === action).length;
  return `${count('create')} ${words[0]}, ${count('update')} ${words[1]}, ${count('delete')} ${words[2]}`;
}

/** An `invalid_configuration` refusal as `FILE:LINE: path: message` lines, like a compiler's. */
function fileProblems(error: ApiError, file: string): ConfigError {
  const lines = [`${error.message.split('\n')[0]}`];
  for (const e of error.errors as { path: string; message: string; line?: number }[]) {
    lines.push(`  ${file}${e.line ? `:${e.line}` : ''}: ${e.path}: ${e.message}`);
  }
  return new ConfigError(lines.join('\n'));
}

export const configApply = adminCommand({
  flags: applyFlags,
  positionals: { usage: 'FILE', min: 1, max: 1, missing: 'Give the configuration file, e.g. `gatehouse config apply gatehouse.yaml --dry-run`.' },
  async run({ client, values, positionals, json }) {
    const file = positionals[0]!;
    let document: string;
    try {
      document = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    // The references are found in the parsed file (a file that does not parse is the server's to report, by line).
    let parsed: unknown;
    try {
      parsed = parse(document);
    } catch {
      parsed = undefined;
    }
    const { secrets, unresolved } = resolveLocally(referencesIn(parsed), process.env, dirname(resolve(file)));
    const body = { document, secrets, unresolved };
    const dryRun = values['dry-run'] === true;
    const prune = values.prune === true;
    const send = async (dry: boolean) => {
      const query = new URLSearchParams({ ...(dry ? { dryRun: '1' } : {}), ...(prune ? { prune: '1' } : {}) });
      try {
        return await client.request<ApplyAnswer>('POST', `/api/admin/config/apply${query.size ? `?${query}` : ''}`, body);
      } catch (error) {
        throw error instanceof ApiError && error.code === 'invalid_configuration' ? fileProblems(error, file) : error;
      }
    };

    if (prune && !dryRun) {
      const deletes = (await send(true)).plan.filter((p) => p.action === 'delete');
      if (deletes.length) {
        await confirmDelete(values.yes === true, 'config apply --prune', 'what the file leaves out', async () =>
          `${[`--prune deletes ${deletes.length === 1 ? 'this, which is' : `these ${deletes.length}, which are`} not in ${file}:`, ...deletes.map((d) => `  ${d.kind} ${d.id}`)].join('\n')}\nDelete ${deletes.length === 1 ? 'it' : 'them'} and apply the file? [y/N] `);
      }
    }
    const answer = await send(dryRun);
    if (json) return printJson(answer);
    if (answer.plan.length === 0) return console.log(`Nothing to change: the server already matches ${file}.`);
    console.log(planLines(answer.plan).join('\n'));
    if (answer.dryRun) return console.log(`\nDry run: ${summary(answer.plan)}. Nothing was changed.`);
    console.log(`\nApplied ${file}: ${summary(answer.plan, ['created', 'updated', 'deleted'])}.`);
    if (answer.secrets.length) {
      console.log('\nNew secrets, shown only now (store them where the applications read them):');
      for (const secret of answer.secrets) console.log(`  ${secret.path}: ${secret.value}`);
    }
  },
});
