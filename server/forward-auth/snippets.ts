/**
 * Set-up help (spec forward-auth.md, "Set-up help"): a working proxy configuration for an
 * application's protected hosts, for the panel's forward-auth tab and `gatehouse app show <id>
 * --proxy caddy|nginx|traefik`. Each does three things: strip the identity headers a client sent
 * (`Remote-User` and `Remote_User` alike: issue 49, H7), route `/.gatehouse/` to Gatehouse (the
 * hand-over's start, callback and sign-out), and ask Gatehouse about every other request, copying
 * its identity headers onto the request the application gets, WebSockets included (issue 44, M2).
 * Every value written is quoted, and the upstream is a scheme, a host and a port only
 * (upstream.ts; issue 49, H10).
 *
 * - Caddy: the `forward_auth` directive (caddyserver.com/docs/caddyfile/directives/forward_auth,
 *   Caddy 2.6). Run for real by test/interop/forward-auth-caddy.test.ts against Debian's caddy 2.6.2.
 * - nginx: `auth_request` (nginx.org/en/docs/http/ngx_http_auth_request_module.html, nginx 1.22):
 *   the block sets the host from the application's own patterns and refuses any other (421), since
 *   a default server gets every host's requests, and names its application to the check
 *   (`X-Gatehouse-Application`; decision 0300, issue 49 H1). The subrequest goes to
 *   `/api/auth/forward/auth-request` as a GET without the body; its 401
 *   carries the start URL in `Location`, which `auth_request_set` reads and `error_page` turns into
 *   the redirect (nginx cannot URL-encode `rd` itself). Run for real by
 *   test/interop/forward-auth-nginx.test.ts against Debian's nginx 1.22.1.
 * - Traefik: the `forwardAuth` middleware in a dynamic configuration file
 *   (doc.traefik.io/traefik/v3.3/reference/routing-configuration/http/middlewares/forwardauth/):
 *   `authResponseHeadersRegex: (?i)^remote[-_]` strips every client `Remote-*` and `Remote_*`
 *   header and copies ours.
 *   Written from that documentation, not run by the tests (Debian has no Traefik package); it says so.
 */
import type { Application } from '../db/schema.js';
import { cleanDisplayText } from '../util/display-text.js';
import { IDENTITY_HEADERS } from './identity-headers.js';
import { APPLICATION_HEADER, AUTH_REQUEST_PATH, FORWARD_PATH, START_PATH } from './check.js';
import { upstreamOrigin } from './upstream.js';

export const PROXIES = ['caddy', 'nginx', 'traefik'] as const;
export type Proxy = (typeof PROXIES)[number];

export interface SnippetOptions {
  /** Where the application itself listens, as upstream.ts gives it back (`http://127.0.0.1:8080`). */
  upstream: string;
  /** Whether the protected hosts are served over https (the default) or plain http. */
  scheme: 'http' | 'https';
}

export const DEFAULT_UPSTREAM = 'http://127.0.0.1:8080';

/**
 * Where an application's proxy configuration points when nobody says otherwise: the app preset's
 * `upstream` input (where the app listens), and its hosts served the way the preset's `baseUrl`
 * is (http or https); else DEFAULT_UPSTREAM over https. The panel, the CLI and the set-up text
 * start from the same. An input stored before the upstream rule (issue 49, H10) is used only if
 * it keeps to it.
 */
export function snippetDefaults(app: Pick<Application, 'preset'>): SnippetOptions {
  const inputs = app.preset?.inputs ?? {};
  return {
    upstream: upstreamOrigin(inputs.upstream ?? DEFAULT_UPSTREAM) ?? DEFAULT_UPSTREAM,
    scheme: inputs.baseUrl?.startsWith('http:') ? 'http' : 'https',
  };
}

/**
 * The identity headers' underscore spellings (issue 49, H7): CGI, WSGI, Rack and PHP turn both
 * `Remote-User` and `Remote_User` into `HTTP_REMOTE_USER`, so a client's `Remote_User` would pass
 * for ours. Every snippet removes both.
 */
const UNDERSCORED = IDENTITY_HEADERS.map((h) => h.replace('-', '_'));

/** Gatehouse as an upstream of the proxy: the issuer's origin. */
function gatehouse(issuer: string) {
  const url = new URL(issuer);
  return { origin: url.origin, https: url.protocol === 'https:', hostPort: url.host };
}

const splitPort = (pattern: string) => {
  const match = /^(.*?)(?::(\d+))?$/.exec(pattern)!;
  return { name: match[1]!, port: match[2] };
};

/**
 * A value as a quoted string of Caddy's and nginx's configuration languages (issue 49, H10: every
 * value written is quoted). Both read `\"` and `\\` inside quotes; neither can escape its own
 * variables (`$x`, `{x}`), which is why the values themselves are checked first (upstream.ts,
 * hosts.ts, the application id's pattern).
 */
const quoted = (value: string) => `"${value.replace(/[\\"]/g, '\\$&')}"`;

/** The application's name in a comment line: one line, nothing that could end the comment. */
const named = (app: Application) => `"${cleanDisplayText(app.name).replaceAll('"', "'")}" (${app.id})`;

function caddy(app: Application, issuer: string, options: SnippetOptions): string {
  const g = gatehouse(issuer);
  const upstream = quoted(g.https ? g.origin : g.hostPort);
  // An https Gatehouse is reached by its own name (TLS and Host); X-Forwarded-Host keeps the site's.
  const hostHeader = g.https ? ['\t\t\theader_up Host {upstream_hostport}'] : [];
  // Separated by spaces: after a quoted address Caddy 2.6 reads a comma as an address of its own,
  // one without a host, which would answer for every host on :443 (found by fuzz-snippets.test.ts).
  const addresses = app.forwardAuth!.hosts.map((h) => quoted(`${options.scheme}://${h}`)).join(' ');
  return [
    `# Gatehouse forward auth for ${named(app)}: Caddy 2.6 or later.`,
    '# caddyserver.com/docs/caddyfile/directives/forward_auth; tested with Debian\'s caddy 2.6.2.',
    `${addresses} {`,
    '\t# Identity headers come from Gatehouse only: drop any the client sent, Remote_User spelt so too.',
    ...IDENTITY_HEADERS.flatMap((h, i) => [`\trequest_header -${h}`, `\trequest_header -${UNDERSCORED[i]}`]),
    '',
    '\t# The sign-in hand-over and sign-out on this host are answered by Gatehouse.',
    '\thandle /.gatehouse/* {',
    `\t\treverse_proxy ${upstream}${hostHeader.length ? ' {' : ''}`,
    ...(hostHeader.length ? [...hostHeader, '\t\t}'] : []),
    '\t}',
    '',
    '\t# Every other request is checked by Gatehouse first (WebSockets pass through as they are).',
    '\thandle {',
    `\t\tforward_auth ${upstream} {`,
    `\t\t\turi ${FORWARD_PATH}`,
    `\t\t\tcopy_headers ${IDENTITY_HEADERS.join(' ')}`,
    ...hostHeader,
    '\t\t}',
    `\t\treverse_proxy ${quoted(options.upstream)}`,
    '\t}',
    '}',
    '',
  ].join('\n');
}

/** A pattern's text as a regular expression of nginx's (PCRE): every character taken literally. */
const literally = (text: string) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/**
 * The server-level rules that name the host of a request, as the configuration knows it (issue
 * 49, H1): `$gatehouse_host` is set only when the request's `Host` is one of the application's
 * patterns (a name keeps the port the browser used: a name without a port matches any), and a
 * request naming any other host is refused with 421 Misdirected Request (RFC 9110 §15.5.20). A
 * block that is nginx's default server for its port receives every host's requests; without
 * this, another application's host would be checked by that application's rules and proxied here.
 * `if` with `set` or `return` at server level is the rewrite module's safe use.
 */
function nginxHostRules(patterns: string[]): string[] {
  const rules = patterns.flatMap((pattern) => {
    const { name, port } = splitPort(pattern);
    const wildcard = name.startsWith('*.');
    const fixed = wildcard ? name.slice(2) : name;
    const label = wildcard ? '([a-z0-9-]{1,63})\\.' : '';
    const portRule = port ? `:${port}` : '(:[0-9]{1,5})?';
    const value = `${wildcard ? '$1.' : ''}${fixed}${port ? `:${port}` : wildcard ? '$2' : '$1'}`;
    return [
      `    if ($http_host ~* "^${label}${literally(fixed)}${portRule}$") {`,
      `        set $gatehouse_host "${value}";`,
      '    }',
    ];
  });
  return [
    '    # The host of each request, as this configuration knows it: one of the application\'s hosts.',
    '    # Any other is refused, even when this block is the default server for its port.',
    '    set $gatehouse_host "";',
    ...rules,
    '    if ($gatehouse_host = "") {',
    '        return 421;',
    '    }',
  ];
}

/**
 * WebSockets (issue 44, M2; Home Assistant's and Uptime Kuma's own proxy guides ask for them):
 * the `Connection` header the application gets follows the client's `Upgrade`, as nginx's
 * documentation does it (nginx.org/en/docs/http/websocket.html). The map is the same in every
 * Gatehouse snippet, so pasting several into one http block is fine (nginx takes a repeated map).
 */
const NGINX_UPGRADE_MAP = [
  '# WebSockets: the Connection header the application gets follows the client\'s Upgrade',
  '# (nginx.org/en/docs/http/websocket.html). The same map in every Gatehouse configuration.',
  'map $http_upgrade $gatehouse_connection {',
  '    default upgrade;',
  '    ""      close;',
  '}',
];

function nginx(app: Application, issuer: string, options: SnippetOptions): string {
  const g = gatehouse(issuer);
  const patterns = app.forwardAuth!.hosts.map(splitPort);
  const names = [...new Set(patterns.map((p) => quoted(p.name)))].join(' ');
  const ports = [...new Set(patterns.map((p) => p.port ?? (options.scheme === 'https' ? '443' : '80')))];
  const listen = ports.map((port) => `    listen ${port}${options.scheme === 'https' ? ' ssl' : ''};`);
  const tls = options.scheme === 'https'
    ? ['    ssl_certificate     /etc/ssl/certs/your-site.pem;      # your certificate', '    ssl_certificate_key /etc/ssl/private/your-site.key;    # and its key']
    : [];
  const sni = g.https ? ['        proxy_ssl_server_name on;'] : [];
  const variables = IDENTITY_HEADERS.map((h) => `gatehouse_${h.slice('Remote-'.length).toLowerCase()}`);
  return [
    `# Gatehouse forward auth for ${named(app)}: nginx 1.22 or later, with auth_request`,
    '# (nginx.org/en/docs/http/ngx_http_auth_request_module.html); tested with Debian\'s nginx 1.22.1.',
    '# Goes inside the http { } block.',
    ...NGINX_UPGRADE_MAP,
    '',
    'server {',
    ...listen,
    `    server_name ${names};`,
    ...tls,
    '',
    ...nginxHostRules(app.forwardAuth!.hosts),
    '',
    '    # The sign-in hand-over and sign-out on this host are answered by Gatehouse.',
    '    location /.gatehouse/ {',
    `        proxy_pass ${quoted(g.origin)};`,
    ...sni,
    '        # Gatehouse\'s redirects (to rd, to its own pages) stay as they are.',
    '        proxy_redirect off;',
    '        proxy_set_header X-Forwarded-Host $gatehouse_host;',
    '        proxy_set_header X-Forwarded-Proto $scheme;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '    }',
    '',
    '    # Every other request is first checked by Gatehouse (a GET without the body), for this application only.',
    '    location = /.gatehouse-check {',
    '        internal;',
    `        proxy_pass ${quoted(`${g.origin}${AUTH_REQUEST_PATH}`)};`,
    ...sni,
    '        proxy_method GET;',
    '        proxy_pass_request_body off;',
    '        proxy_set_header Content-Length "";',
    `        proxy_set_header ${APPLICATION_HEADER} ${quoted(app.id)};`,
    '        proxy_set_header X-Original-URL "$scheme://$gatehouse_host$request_uri";',
    '        proxy_set_header X-Original-Method $request_method;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '    }',
    '',
    '    location / {',
    '        auth_request /.gatehouse-check;',
    ...IDENTITY_HEADERS.map((h, i) => `        auth_request_set $${variables[i]} $upstream_http_${h.toLowerCase().replace('-', '_')};`),
    '        # A browser that is not signed in gets 401 with the sign-in address in Location.',
    '        auth_request_set $gatehouse_start $upstream_http_location;',
    '        error_page 401 = @gatehouse_sign_in;',
    '        # Set from Gatehouse\'s answer, replacing any the client sent (an empty one is not sent);',
    '        # the Remote_User spellings are never sent (CGI and PHP read them as Remote-User).',
    ...IDENTITY_HEADERS.map((h, i) => `        proxy_set_header ${h} $${variables[i]};`),
    ...UNDERSCORED.map((h) => `        proxy_set_header ${h} "";`),
    '        # WebSockets pass through: HTTP/1.1, with the client\'s Upgrade.',
    '        proxy_http_version 1.1;',
    '        proxy_set_header Upgrade $http_upgrade;',
    '        proxy_set_header Connection $gatehouse_connection;',
    `        proxy_pass ${quoted(options.upstream)};`,
    '    }',
    '',
    '    # A browser goes to sign in; anything else keeps the 401 (and its WWW-Authenticate).',
    '    location @gatehouse_sign_in {',
    '        if ($gatehouse_start) {',
    '            return 302 $gatehouse_start;',
    '        }',
    '        return 401;',
    '    }',
    '}',
    '',
  ].join('\n');
}

/** Traefik's Host() and HostRegexp() for a pattern (ports are the entry point's, not the rule's). */
function traefikRule(pattern: string): string {
  const { name } = splitPort(pattern);
  if (!name.startsWith('*.')) return `Host(\`${name}\`)`;
  return `HostRegexp(\`^[^.]+${name.slice(1).replaceAll('.', '\\.')}$\`)`;
}

/**
 * Traefik removes every request header `authResponseHeadersRegex` matches before it copies the
 * answer's; Go writes a client's `Remote_User` as `Remote_user`, hence both spellings, any case.
 */
const TRAEFIK_IDENTITY_REGEX = '(?i)^remote[-_]';

function traefik(app: Application, issuer: string, options: SnippetOptions): string {
  const g = gatehouse(issuer);
  const rule = [...new Set(app.forwardAuth!.hosts.map(traefikRule))].join(' || ');
  const id = app.id;
  // YAML's double-quoted strings read JSON's escapes: every value and name is written that way.
  const y = (value: string) => JSON.stringify(value);
  return [
    `# Gatehouse forward auth for ${named(app)}: a Traefik v3 dynamic configuration (file provider).`,
    '# Written from Traefik\'s documentation of the forwardAuth middleware',
    '# (doc.traefik.io/traefik/v3.3/reference/routing-configuration/http/middlewares/forwardauth/);',
    '# unlike the Caddy and nginx snippets, it is not run by Gatehouse\'s tests.',
    ...(options.scheme === 'https' ? ['# Add your entry point and TLS settings to both routers.'] : []),
    'http:',
    '  middlewares:',
    `    ${y(`gatehouse-${id}`)}:`,
    '      forwardAuth:',
    `        address: ${y(`${g.origin}${FORWARD_PATH}`)}`,
    '        # Copies Gatehouse\'s identity headers after removing every Remote-* and Remote_* header the client sent.',
    `        authResponseHeadersRegex: ${y(TRAEFIK_IDENTITY_REGEX)}`,
    '  routers:',
    `    ${y(id)}:`,
    `      rule: ${y(rule)}`,
    `      middlewares: [${y(`gatehouse-${id}`)}]`,
    `      service: ${y(id)}`,
    '    # The sign-in hand-over and sign-out on these hosts are answered by Gatehouse (the longer rule wins).',
    `    ${y(`${id}-gatehouse`)}:`,
    `      rule: ${y(`(${rule}) && PathPrefix(\`/.gatehouse/\`)`)}`,
    `      service: ${y(`gatehouse-${id}`)}`,
    '  services:',
    `    ${y(id)}:`,
    '      loadBalancer:',
    '        servers:',
    `          - url: ${y(options.upstream)}`,
    `    ${y(`gatehouse-${id}`)}:`,
    '      loadBalancer:',
    '        servers:',
    `          - url: ${y(g.origin)}`,
    '',
  ].join('\n');
}

/** The snippet for `proxy`, for an application that protects hosts. */
export function snippet(proxy: Proxy, app: Application, issuer: string, options: SnippetOptions): string {
  switch (proxy) {
    case 'caddy': return caddy(app, issuer, options);
    case 'nginx': return nginx(app, issuer, options);
    case 'traefik': return traefik(app, issuer, options);
  }
}

/** The start URL pattern, for the docs and the panel's explanation. */
export const START_URL_EXAMPLE = `${START_PATH}?rd=<the URL the person asked for>`;
