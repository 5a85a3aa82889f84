/**
 * Named administrators and the one rule over every admin route (spec administrators-and-people.md,
 * server/http/admin-policy.ts). The route-by-role table enumerates every registered `/api/admin`
 * route (Fastify's onRoute) and proves, for the admin token, an owner, a people manager, an app
 * manager (of `alpha`, probing `alpha` and `beta`) and an API key of `alpha`, that an allowed call
 * is not refused (never 401/403) and a refused one is 403 with `forbidden` (people) or
 * `insufficient_scope` (keys). Allowed writes are probed with a text/plain body, which every admin
 * route refuses (415) after the rule has been applied, so the probes change nothing.
 *
 * The expectations below are written out by hand from the spec's role descriptions (not read
 * from the policy table), so a wrong entry in the table fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RouteOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { administrator, asBearer, panelSignIn, type PanelTokens, type TestAdministrator } from '../helpers/admins.js';
import { listedRoutes } from '../../server/http/admin-policy.js';
import { routeTable } from '../../server/http/admin-auth.js';
import { ROLES_DOC, withTable } from '../../scripts/admin-roles-doc.js';
import { auditLog } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';
import { PANEL_CLIENT_ID } from '../../server/administrators/panel-client.js';

type Who = 'admin token' | 'owner' | 'people_manager' | 'app_manager' | 'api key';

const routes: { method: string; url: string }[] = [];
let t: TestApp;
const bearer: Record<Who, string> = {} as Record<Who, string>;
let owner: TestAdministrator;
let ownerTokens: PanelTokens;

beforeAll(async () => {
  t = await makeApp({
    perFile: true,
    config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } },
    deps: {
      onRoute: (route: RouteOptions) => {
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD' && route.url.startsWith('/api/admin/')) routes.push({ method, url: route.url });
        }
      },
    },
  });
  for (const id of ['alpha', 'beta']) {
    const res = await t.admin('POST', '/api/admin/applications', { id, name: id, audience: `https://${id}.example.com/api`, redirectUris: [`https://${id}.example.com/cb`], clientType: 'web' });
    expect(res.statusCode, res.body).toBe(201);
  }
  owner = await administrator(t, 'olive@example.com', 'owner');
  const peopleManager = await administrator(t, 'pat@example.com', 'people_manager');
  const appManager = await administrator(t, 'amy@example.com', 'app_manager', ['alpha']);
  ownerTokens = await panelSignIn(t, owner);
  bearer['admin token'] = 'test-admin-token-0123456789';
  bearer.owner = ownerTokens.access_token;
  bearer.people_manager = (await panelSignIn(t, peopleManager)).access_token;
  bearer.app_manager = (await panelSignIn(t, appManager)).access_token;
  const key = await t.admin('POST', '/api/admin/applications/alpha/api-keys', {
    name: 'all', scopes: ['application:read', 'application:write', 'users:read', 'users:write', 'invitations:read', 'invitations:write', 'webhooks:read', 'webhooks:write'],
  });
  bearer['api key'] = key.json().key;
});

/** Spelled out from the spec: what a people manager may call. */
const PEOPLE_MANAGER: RegExp[] = [
  /^GET \/api\/admin\/(overview|me|auth\/providers|settings\/password-policy|activity|applications|presets|presets\/:id)$/,
  /^GET \/api\/admin\/applications\/:id\/setup$/,
  /^(GET|POST|PATCH|DELETE) \/api\/admin\/people(\/:id(\/(password-reset|password-reset-link|sessions|sign-out))?)?$/,
  // A person's network credentials and their RADIUS sessions (radius.md: revocable by administrators).
  /^(GET|POST) \/api\/admin\/people\/:id\/(network-certificates|radius-sessions)$/,
  /^DELETE \/api\/admin\/people\/:id\/network-certificates\/:certificateId$/,
  /^(GET|POST|PUT|PATCH|DELETE) \/api\/admin\/groups(\/.*)?$/,
  /^GET \/api\/admin\/applications\/:id(\/activity)?$/,
  /^(GET|POST|PATCH|DELETE) \/api\/admin\/applications\/:id\/(users|invitations)(\/.*)?$/,
];
/** What an app manager may call on their own application (plus the reads every administrator has). */
const APP_MANAGER_OWN: RegExp[] = [
  /^GET \/api\/admin\/(overview|me|auth\/providers|settings\/password-policy|applications|presets|presets\/:id)$/,
  /^(GET|PATCH) \/api\/admin\/applications\/:id$/,
  /^(GET|POST|PUT|PATCH|DELETE) \/api\/admin\/applications\/:id\/.+$/,
];
/** What an API key with every scope may call on its own application. */
const API_KEY_OWN: RegExp[] = [
  /^(GET|PATCH) \/api\/admin\/applications\/:id(\/auth-policy|\/activity)?$/,
  /^(GET|POST|PATCH|DELETE) \/api\/admin\/applications\/:id\/(users|invitations)(\/:(uid|iid)(\/resend|\/claims|\/preset-checks)?)?$/,
  /^(GET|POST) \/api\/admin\/applications\/:id\/(webhook-deliveries(\/:did\/retry)?|webhook-test|backchannel-logouts)$/,
  /^(GET \/api\/admin\/applications\/:id\/(setup|preset)|POST \/api\/admin\/applications\/:id\/preset\/upgrade)$/,
];

const matches = (list: RegExp[], route: string) => list.some((r) => r.test(route));

function expected(who: Who, method: string, url: string, appId: string): boolean {
  const route = `${method} ${url}`;
  // Only the owner deletes applications; other owner-only application routes are spelled here too.
  const ownerOnlyAppRoute = route === 'DELETE /api/admin/applications/:id';
  switch (who) {
    case 'admin token':
    case 'owner':
      return true;
    case 'people_manager':
      return matches(PEOPLE_MANAGER, route);
    case 'app_manager':
      if (!url.startsWith('/api/admin/applications/:id')) return matches(APP_MANAGER_OWN, route);
      return appId === 'alpha' && !ownerOnlyAppRoute && matches(APP_MANAGER_OWN, route);
    case 'api key':
      return appId === 'alpha' && url.startsWith('/api/admin/applications/:id') && matches(API_KEY_OWN, route);
  }
}

function probe(who: Who, method: string, url: string, appId: string) {
  const path = url.replace(':id', appId).replace(/:[a-zA-Z]+/g, 'nothing-here');
  const write = method !== 'GET';
  return t.app.inject({
    method: method as 'GET',
    url: path,
    headers: { authorization: `Bearer ${bearer[who]}`, ...(write ? { 'content-type': 'text/plain' } : {}) },
    ...(write ? { payload: 'probe' } : {}),
  });
}

describe('the route-by-role table', () => {
  it('lists only routes that exist', () => {
    const registered = new Set(routes.map((r) => `${r.method} ${r.url.slice('/api/admin'.length)}`));
    expect(listedRoutes(routeTable(t.app.ctx.registries.adminRoutes.all)).filter((r) => !registered.has(r))).toEqual([]);
    expect(routes.length).toBeGreaterThan(50);
  });

  it("names only routes that exist where the panel asks what a role may do (me.ts may, the page and section registries)", () => {
    const registered = new Set(routes.map((r) => `${r.method} ${r.url.slice('/api/admin'.length)}`));
    const named = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/(?:may\(|needs: )'([A-Z]+ \/[^']*)'/g)) named.add(match[1]!);
        }
      }
    };
    walk(join(import.meta.dirname, '../../renderer/src'));
    expect(named.size).toBeGreaterThan(20);
    expect([...named].filter((call) => !registered.has(call))).toEqual([]);
  });

  it('allows and refuses every admin route for each role, the admin token and an API key', async () => {
    const wrong: string[] = [];
    const whos: Who[] = ['admin token', 'owner', 'people_manager', 'app_manager', 'api key'];
    for (const { method, url } of routes) {
      const appIds = url.startsWith('/api/admin/applications/:id') ? ['alpha', 'beta'] : ['-'];
      for (const appId of appIds) {
        for (const who of whos) {
          const res = await probe(who, method, url, appId);
          const allowed = expected(who, method, url, appId);
          const label = `${who} ${method} ${url} (${appId}) → ${res.statusCode} ${res.statusCode >= 400 ? res.json().code : ''}`;
          if (allowed && (res.statusCode === 401 || res.statusCode === 403)) wrong.push(`should allow: ${label}`);
          if (!allowed) {
            const code = who === 'api key' ? 'insufficient_scope' : 'forbidden';
            if (res.statusCode !== 403 || res.json().code !== code) wrong.push(`should refuse with ${code}: ${label}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("GET /api/admin/me's capabilities (what the panel shows) say what the table above proves, for each role", async () => {
    const wrong: string[] = [];
    for (const who of ['admin token', 'owner', 'people_manager', 'app_manager'] as Who[]) {
      const me = (await asBearer(t, bearer[who], 'GET', '/api/admin/me')).json();
      const may = (route: string, appId: string) => {
        if (me.capabilities.everything) return true;
        const allowed = me.capabilities.routes.find((r: { route: string }) => r.route === route);
        return Boolean(allowed) && (allowed.applications === 'all' || me.applications.includes(appId));
      };
      for (const { method, url } of routes) {
        for (const appId of url.startsWith('/api/admin/applications/:id') ? ['alpha', 'beta'] : ['-']) {
          const route = `${method} ${url.slice('/api/admin'.length)}`;
          if (may(route, appId) !== expected(who, method, url, appId)) wrong.push(`${who} ${route} (${appId}): capabilities say ${may(route, appId)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("docs/administrators.md's role table is the route table (scripts/admin-roles-doc.ts writes it)", () => {
    const page = readFileSync(ROLES_DOC, 'utf8');
    expect(withTable(page, routeTable(t.app.ctx.registries.adminRoutes.all)), 'run `npx tsx scripts/admin-roles-doc.ts`').toBe(page);
  });

  it('answers 404 for the built-in panel client on every application route, whoever asks', async () => {
    for (const who of ['admin token', 'owner'] as Who[]) {
      const res = await asBearer(t, bearer[who], 'GET', `/api/admin/applications/${PANEL_CLIENT_ID}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('application_not_found');
      const patched = await asBearer(t, bearer[who], 'PATCH', `/api/admin/applications/${PANEL_CLIENT_ID}`, { name: 'Mine now' });
      expect(patched.statusCode).toBe(404);
    }
    const listed = (await t.admin('GET', '/api/admin/applications')).json().applications.map((a: { id: string }) => a.id);
    expect(listed).not.toContain(PANEL_CLIENT_ID);
    const created = await t.admin('POST', '/api/admin/applications', { id: PANEL_CLIENT_ID, name: 'x', audience: 'https://x.example.com', redirectUris: ['https://x.example.com/cb'] });
    expect(created.statusCode).toBe(400);
  });

  it('lists only their own applications to an app manager', async () => {
    const res = await asBearer(t, bearer.app_manager, 'GET', '/api/admin/applications');
    expect(res.statusCode).toBe(200);
    expect(res.json().applications.map((a: { id: string }) => a.id)).toEqual(['alpha']);
    const all = await asBearer(t, bearer.people_manager, 'GET', '/api/admin/applications');
    expect(all.json().applications.map((a: { id: string }) => a.id)).toEqual(['alpha', 'beta', 'lobby']);
  });

  it('names the person in the audit log', async () => {
    const res = await asBearer(t, ownerTokens.access_token, 'PATCH', '/api/admin/applications/beta', { name: 'Beta by Olive' });
    expect(res.statusCode, res.body).toBe(200);
    const entries = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.updated')));
    expect(entries.map((e) => e.actor)).toEqual([`person:${owner.personId}`]);
  });
});
