/**
 * A configuration file carries every setting of an application (config-as-code/fields.ts): its
 * entry is derived from the admin API's schemas, so a field added to applications is exported,
 * planned and applied without touching config-as-code/. This test fails, naming the field, when
 * the record has something the file neither carries nor lists in `excludedApplicationFields` with
 * its reason (a secret, a timestamp, a plugin field's derived value), and when an exclusion no
 * longer names a record field. The fields are those of a built app: the core's and every plugin's
 * (plugin-api/application-fields.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { TSchema } from 'typebox';
import { applicationSchemas as apiSchemas } from '../../server/applications/schemas.js';
import { excludedApplicationFields, project } from '../../server/config-as-code/fields.js';
import { applicationSchemas as fileSchemas } from '../../server/config-as-code/sections.js';
import { buildApp } from '../../server/app.js';
import { testConfig } from '../../server/config.js';
import { openDatabase } from '../../server/db/client.js';

interface Node {
  type?: string;
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
}

/** Every path a schema names: fields by name, list items as `*`, through unions. */
function paths(schema: Node, at = '', out = new Set<string>()): Set<string> {
  const join = (key: string) => (at ? `${at}.${key}` : key);
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    out.add(join(key));
    paths(sub, join(key), out);
  }
  if (schema.items) paths(schema.items, join('*'), out);
  for (const member of schema.anyOf ?? []) paths(member, at, out);
  return out;
}

const db = openDatabase(':memory:');
const app = await buildApp({ db, config: testConfig() });
afterAll(async () => {
  await app.close();
  db.$client.close();
});
const fields = app.ctx.registries.applicationFields.all;
const api = apiSchemas(fields);
const applicationSchemas = fileSchemas(fields);
const EXCLUDED_APPLICATION_FIELDS = excludedApplicationFields(fields);
const record = paths(api.record as Node);
const exported = paths(applicationSchemas.exported as Node);
const excluded = Object.keys(EXCLUDED_APPLICATION_FIELDS);
const isExcluded = (path: string) => excluded.some((e) => path === e || path.startsWith(`${e}.`));

describe('an application in a configuration file', () => {
  it('carries every field of the record, or excludes it with a reason', () => {
    expect([...record].filter((path) => !exported.has(path) && !isExcluded(path))).toEqual([]);
  });

  it('excludes only fields the record has and the file does not carry', () => {
    expect(excluded.filter((path) => !record.has(path) || exported.has(path))).toEqual([]);
    for (const reason of Object.values(EXCLUDED_APPLICATION_FIELDS)) expect(reason.length).toBeGreaterThan(10);
  });

  it('takes every field the create API takes (secrets as references), and nothing else but the preset origin', () => {
    const create = Object.keys(api.create.properties).filter((f) => f !== 'id');
    const entry = Object.keys(applicationSchemas.entry.properties).filter((f) => f !== 'id');
    expect(create.filter((f) => !exported.has(f) && !applicationSchemas.secrets.includes(f))).toEqual([]);
    expect(entry.filter((f) => !create.includes(f) && !applicationSchemas.secrets.includes(f))).toEqual(['preset']);
    expect(applicationSchemas.secrets.every((f) => entry.includes(f) && !exported.has(f))).toBe(true);
  });

  it('is the record projected: what it drops is named by path', () => {
    const dropped = new Set<string>();
    const value = project({ a: 1, b: { c: 2, d: 3 }, e: [{ f: 1, g: 2 }], h: { free: { z: 1, y: 2 } } }, {
      type: 'object',
      properties: {
        a: { type: 'number' },
        b: { type: 'object', properties: { c: { type: 'number' } } },
        e: { type: 'array', items: { type: 'object', properties: { f: { type: 'number' } } } },
        h: { anyOf: [{ type: 'object' }, { type: 'null' }] },
      },
    } as unknown as TSchema, dropped);
    expect(value).toEqual({ a: 1, b: { c: 2 }, e: [{ f: 1 }], h: { free: { y: 2, z: 1 } } });
    expect(JSON.stringify(value)).toBe('{"a":1,"b":{"c":2},"e":[{"f":1}],"h":{"free":{"y":2,"z":1}}}');
    expect([...dropped]).toEqual(['b.d', 'e.*.g']);
  });
});
