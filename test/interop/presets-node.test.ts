/**
 * The Node presets for real (issue 37, item 5): express-openid-connect, Auth.js (@auth/express)
 * and Passport with openid-client's strategy, each an Express app on its own port, configured from
 * its application's GET …/setup alone (the .env block and the JSON file, placeholders filled in),
 * and a person signs in through each library's own redirects: the library sends the browser to
 * Gatehouse, takes the code back at the preset's redirect URI, exchanges it and shows the person.
 * One Gatehouse for the file; the three apps are started once.
 */
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { auth as expressOpenidConnect } from 'express-openid-connect';
import { ExpressAuth, getSession } from '@auth/express';
import * as client from 'openid-client';
import { Strategy } from 'openid-client/passport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { fill, fromPreset, parseEnv, setupFile, signedInBrowser } from '../helpers/preset-interop.js';

let server: OAuthServer;
const servers: Server[] = [];
const sites: Record<'eoc' | 'authjs' | 'passport', string> = { eoc: '', authjs: '', passport: '' };

async function listen(app: express.Express, port: number): Promise<void> {
  await new Promise<void>((resolve) => servers.push(app.listen(port, '127.0.0.1', resolve)));
}

/** express-openid-connect: `auth()` with the .env block and auth-config.json. */
async function startExpressOpenidConnect() {
  const port = await freePort();
  sites.eoc = `http://localhost:${port}`;
  const { app: created, setup } = await fromPreset(server, 'express-openid-connect', { baseUrl: sites.eoc }, 'eoc');
  const env = parseEnv(fill(setupFile(setup, '.env'), { clientSecret: created.clientSecret!, appSecret: randomBytes(32).toString('base64url') }));
  const config = JSON.parse(setupFile(setup, 'auth-config.json')) as Record<string, unknown>;
  const app = express();
  app.use(expressOpenidConnect({ ...config, issuerBaseURL: env.ISSUER_BASE_URL, baseURL: env.BASE_URL, clientID: env.CLIENT_ID, clientSecret: env.CLIENT_SECRET, secret: env.SECRET }));
  app.get('/', (req, res) => res.json({ user: req.oidc.user?.preferred_username, email: req.oidc.user?.email }));
  await listen(app, port);
}

/** Auth.js: ExpressAuth at /auth/* with the provider object and AUTH_SECRET from the set-up text. */
async function startAuthjs() {
  const port = await freePort();
  sites.authjs = `http://localhost:${port}`;
  const { app: created, setup } = await fromPreset(server, 'authjs', { baseUrl: sites.authjs }, 'authjs');
  const secrets = { clientSecret: created.clientSecret!, appSecret: randomBytes(32).toString('base64url') };
  const env = parseEnv(fill(setupFile(setup, '.env'), secrets));
  const provider = JSON.parse(fill(setupFile(setup, 'auth-provider.json'), secrets));
  const config = { providers: [provider], secret: env.AUTH_SECRET!, trustHost: true, basePath: new URL(env.AUTH_URL!).pathname };
  const app = express();
  app.set('trust proxy', true);
  app.use('/auth/*', ExpressAuth(config));
  app.get('/', async (req, res) => {
    const found = await getSession(req, config);
    res.json({ email: found?.user?.email ?? null });
  });
  await listen(app, port);
}

/** Passport with openid-client's strategy: discovery and the Strategy from the .env block. */
async function startPassport() {
  const port = await freePort();
  sites.passport = `http://localhost:${port}`;
  const { app: created, setup } = await fromPreset(server, 'passport-openid-client', { baseUrl: sites.passport }, 'passport-app');
  const env = parseEnv(fill(setupFile(setup, '.env'), { clientSecret: created.clientSecret! }));
  // Plain http on loopback is allowed only when asked for (openid-client 6).
  const config = await client.discovery(new URL(env.OIDC_ISSUER!), env.OIDC_CLIENT_ID!, env.OIDC_CLIENT_SECRET!, undefined, { execute: [client.allowInsecureRequests] });
  const app = express();
  app.use(session({ secret: randomBytes(32).toString('base64url'), resave: false, saveUninitialized: false }));
  app.use(passport.initialize());
  app.use(passport.session());
  passport.serializeUser((user, done) => done(null, user));
  passport.deserializeUser((user: Express.User, done) => done(null, user));
  passport.use(new Strategy({ name: 'gatehouse', config, scope: env.OIDC_SCOPE!, callbackURL: env.OIDC_CALLBACK_URL! }, (tokens, verified) => verified(null, tokens.claims())));
  app.get('/login', passport.authenticate('gatehouse'));
  app.get(new URL(env.OIDC_CALLBACK_URL!).pathname, passport.authenticate('gatehouse', { successRedirect: '/', failureRedirect: '/failed' }));
  app.get('/', (req, res) => res.json({ user: (req.user as { preferred_username?: string } | undefined)?.preferred_username ?? null }));
  await listen(app, port);
}

beforeAll(async () => {
  server = await startOAuthServer();
  await startExpressOpenidConnect();
  await startAuthjs();
  await startPassport();
}, 60_000);

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await server?.stop();
});

const host = (url: string) => new URL(url).host;

describe('Node relying parties configured from the presets\' set-up text', () => {
  it('express-openid-connect: the code flow with the client secret, then req.oidc.user has the Gatehouse username and e-mail', async () => {
    const browser = await signedInBrowser(server, 'eoc', 'ada@example.com', [host(sites.eoc)]);
    const visit = await browser.follow(`${sites.eoc}/`);
    expect(visit.res.status, JSON.stringify(visit.hops)).toBe(200);
    expect(await visit.res.json()).toEqual({ user: 'ada', email: 'ada@example.com' });
    expect(visit.hops.map((h) => new URL(h.url).pathname)).toEqual(['/', '/api/auth/oauth2/authorize', '/callback', '/']);
  });

  it('Auth.js: sign-in through its own CSRF-checked form, the callback /auth/callback/gatehouse, then a session with the e-mail', async () => {
    const browser = await signedInBrowser(server, 'authjs', 'bea@example.com', [host(sites.authjs)]);
    const csrf = await browser.request(`${sites.authjs}/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const signIn = await browser.follow(`${sites.authjs}/auth/signin/gatehouse`, { form: { csrfToken, callbackUrl: `${sites.authjs}/` } });
    expect(signIn.hops.map((h) => new URL(h.url).pathname)).toEqual(['/auth/signin/gatehouse', '/api/auth/oauth2/authorize', '/auth/callback/gatehouse', '/']);
    expect(signIn.res.status, JSON.stringify(signIn.hops)).toBe(200);
    expect(await signIn.res.json()).toEqual({ email: 'bea@example.com' });
  });

  it('Passport with openid-client: the strategy signs the person in, and the claims carry preferred_username', async () => {
    const browser = await signedInBrowser(server, 'passport-app', 'cy@example.com', [host(sites.passport)]);
    const visit = await browser.follow(`${sites.passport}/login`);
    expect(visit.hops.map((h) => new URL(h.url).pathname)).toEqual(['/login', '/api/auth/oauth2/authorize', '/auth/callback', '/']);
    expect(visit.res.status, JSON.stringify(visit.hops)).toBe(200);
    expect(await visit.res.json()).toEqual({ user: 'cy' });
  });
});
