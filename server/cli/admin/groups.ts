/**
 * `gatehouse group list | create | show | delete | add | remove`: directory groups through the
 * running server's admin API (spec claims-and-groups.md, "Groups"). People are named by e-mail
 * address on the command line and found through `GET /api/admin/people?q=`; membership changes
 * are idempotent, as the API's are.
 */
import { ConfigError } from '../../config.js';
import { adminCommand, listAll, type AdminClient } from '../admin-client.js';
import { bodyFromFlags, type FlagTable } from '../flags.js';
import { formatFields, formatTable, printJson } from '../output.js';
import { confirmDelete } from '../confirm.js';

interface Group {
  id: string;
  name: string;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Member {
  id: string;
  email: string;
  username: string;
  name: string | null;
  addedAt: string;
}

const groupPath = (id: string) => `/api/admin/groups/${encodeURIComponent(id)}`;
const oneGroup = (example: string) => ({ usage: 'GROUP', min: 1, max: 1, missing: `Give one group id, e.g. \`gatehouse group ${example}\`.` });

const listFlags: FlagTable = {
  query: { type: 'string', value: 'PREFIX', help: 'only groups whose id starts with PREFIX' },
};

export const groupList = adminCommand({
  flags: listFlags,
  async run({ client, values, json }) {
    const groups = await listAll<Group>(client, '/api/admin/groups', 'groups', { q: values.query as string | undefined });
    if (json) return printJson({ groups });
    if (groups.length === 0) {
      return console.log(values.query ? `No group id starts with "${String(values.query)}".` : 'No groups yet. Create one with `gatehouse group create ID --name NAME`.');
    }
    console.log(formatTable(['ID', 'NAME', 'DESCRIPTION'], groups.map((g) => [g.id, g.name, g.description ?? ''])));
  },
});

const createFlags: FlagTable = {
  name: { type: 'string', value: 'NAME', help: 'display name (default: the id)', field: 'name' },
  description: { type: 'string', value: 'TEXT', help: 'what the group is for (up to 1000 characters)', field: 'description' },
};

export const groupCreate = adminCommand({
  flags: createFlags,
  positionals: { usage: 'ID', min: 1, max: 1, missing: 'Give the new group\'s id, e.g. `gatehouse group create media-users --name "Media users"`.' },
  async run({ client, values, positionals, json }) {
    const id = positionals[0]!;
    const body = { id, name: id, ...bodyFromFlags(createFlags, values) };
    const group = await client.request<Group>('POST', '/api/admin/groups', body);
    if (json) return printJson(group);
    console.log(`Created group ${group.id} (${group.name}).`);
  },
});

export const groupShow = adminCommand({
  positionals: oneGroup('show media-users'),
  async run({ client, positionals, json }) {
    const group = await client.request<Group>('GET', groupPath(positionals[0]!));
    const members = await listAll<Member>(client, `${groupPath(group.id)}/members`, 'members');
    if (json) return printJson({ ...group, members });
    console.log(formatFields([
      ['ID', group.id],
      ['Name', group.name],
      ['Description', group.description ?? '(none)'],
      ['Members', String(members.length)],
      ['Created', group.createdAt],
      ['Updated', group.updatedAt],
    ]));
    if (members.length) console.log(`\n${formatTable(['E-MAIL', 'USERNAME', 'NAME', 'ADDED'], members.map((m) => [m.email, m.username, m.name ?? '', m.addedAt]))}`);
  },
});

const deleteFlags: FlagTable = {
  yes: { type: 'boolean', short: 'y', help: 'delete without asking (needed when there is no terminal to ask on)' },
};

export const groupDelete = adminCommand({
  flags: deleteFlags,
  positionals: oneGroup('delete media-users'),
  async run({ client, values, positionals, json }) {
    const id = positionals[0]!;
    await confirmDelete(values.yes === true, 'group delete', id, async () => {
      const group = await client.request<Group>('GET', groupPath(id));
      return `Delete group ${group.id} (${group.name})? Its members stay, outside it. This cannot be undone. [y/N] `;
    });
    await client.request('DELETE', groupPath(id));
    if (json) return printJson({ id, deleted: true });
    console.log(`Deleted group ${id}.`);
  },
});

/** The person with exactly this e-mail address (the admin API's `q` is a prefix). */
async function personByEmail(client: AdminClient, email: string): Promise<{ id: string; email: string }> {
  const wanted = email.trim().toLowerCase();
  const page = await client.request<{ people: { id: string; email: string }[] }>('GET', `/api/admin/people?${new URLSearchParams({ q: wanted, limit: '200' })}`);
  const person = page.people.find((p) => p.email === wanted);
  if (!person) throw new ConfigError(`Nobody has the e-mail address ${wanted} (person_not_found).`);
  return person;
}

function membershipCommand(method: 'PUT' | 'DELETE', done: (email: string, group: string) => string) {
  const verb = method === 'PUT' ? 'add' : 'remove';
  return adminCommand({
    positionals: { usage: 'GROUP EMAIL...', min: 2, missing: `Give a group id and one or more e-mail addresses, e.g. \`gatehouse group ${verb} family ann@example.com\`.` },
    async run({ client, positionals, json }) {
      const [group, ...emails] = positionals as [string, ...string[]];
      // The group first: an unknown one is one clear error, not one per address.
      await client.request('GET', groupPath(group));
      const people = [];
      for (const email of emails) people.push(await personByEmail(client, email));
      for (const person of people) await client.request(method, `${groupPath(group)}/members/${encodeURIComponent(person.id)}`);
      if (json) return printJson({ group, [method === 'PUT' ? 'added' : 'removed']: people.map((p) => ({ id: p.id, email: p.email })) });
      for (const person of people) console.log(done(person.email, group));
    },
  });
}

export const groupAdd = membershipCommand('PUT', (email, group) => `${email} is in ${group}.`);
export const groupRemove = membershipCommand('DELETE', (email, group) => `${email} is not in ${group}.`);
