/**
 * The one API client of the panel. Every request carries the admin token; every failure becomes
 * an ApiError whose message is the problem-details text in words (DESIGN §4.1).
 */
import { session } from './session';

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: { path: string; message: string }[];
  error?: string;
  error_description?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(describeProblem(status, problem));
  }
  get code(): string | undefined {
    return this.problem.code ?? this.problem.error;
  }
}

/** `body.redirectUris.0` / `/body/redirectUris/0` → `redirectUris #1`, for people. */
export function fieldName(path: string): string {
  return path
    .replace(/^\/?(body|querystring|query|params)[./]/, '')
    .split(/[./]/)
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `#${Number(part) + 1}` : part))
    .join(' ')
    .replace(/ #/g, ' #');
}

export function describeProblem(status: number, p: Problem): string {
  let text = p.detail ?? p.error_description ?? p.title ?? `The server answered ${status}.`;
  if (p.errors?.length) {
    text += ' ' + p.errors.map((e) => (e.path && e.path !== '/' ? `${fieldName(e.path)}: ${e.message}` : e.message)).join('; ');
  }
  return text;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export async function request<T>(method: Method, path: string, body?: unknown, token = session.token(), retried = false): Promise<T> {
  let response: Response;
  try {
    response = await fetch(session.serverUrl() + path, {
      method,
      headers: {
        accept: 'application/json, application/problem+json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, { detail: 'The Gatehouse server cannot be reached. Is it running?' });
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = { detail: text.slice(0, 300) };
  }
  if (!response.ok) {
    if (response.status === 401 && path.startsWith('/api/admin')) {
      // A newer token may exist: one signed in meanwhile, or (desktop) one rotated since the window
      // opened, which the shell hands out when asked again. Retry once with it.
      const current = session.token();
      const newer = !retried && token && (token !== current ? Boolean(current) : await session.reload(token));
      if (newer) return request<T>(method, path, body, session.token(), true);
      if (token === session.token()) session.expired();
    }
    if (response.status === 404 && (data as Problem | undefined)?.code === 'route_not_found') {
      throw new ApiError(404, { ...(data as Problem), detail: 'This server does not offer this feature yet.' });
    }
    throw new ApiError(response.status, (data as Problem) ?? {});
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: (path: string) => request<void>('DELETE', path),
};

export const enc = encodeURIComponent;

/** Admin lists are `{<plural>: [...], nextCursor}`; this finds the array whatever its name. */
export function listOf<T>(data: unknown): T[] {
  if (Array.isArray(data)) return data as T[];
  if (data && typeof data === 'object') {
    for (const value of Object.values(data)) if (Array.isArray(value)) return value as T[];
  }
  return [];
}

// ---- Wire types (DESIGN §4.3–4.8) ----

export type ClientType = 'web' | 'spa' | 'native';
export type SignupPolicy = 'open' | 'invite_only' | 'closed';
export interface ProfileField {
  key: string;
  label: string;
  type: string;
  required: boolean;
  user_editable: boolean;
  options?: string[];
  /** number and integer fields */
  min?: number;
  max?: number;
  /** string, text, email and url fields */
  max_length?: number;
  description?: string;
}
export interface AuthPolicy {
  signup_policy: SignupPolicy;
  allowed_providers: string[];
  profile_fields: ProfileField[];
}
export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials' | 'urn:ietf:params:oauth:grant-type:device_code';
export interface Application {
  id: string;
  name: string;
  audience: string;
  redirectUris: string[];
  clientType: ClientType;
  webhookUrl: string | null;
  webhookSecretSet: boolean;
  ssoGroupId: string | null;
  authPolicy: AuthPolicy;
  grantTypes: GrantType[];
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  createdAt: string;
  updatedAt: string;
  clientSecret?: string;
  webhookSecret?: string;
}
export interface SsoGroup {
  id: string;
  name: string;
  applicationIds: string[];
  createdAt: string;
}
export interface Provider {
  id: string;
  name: string;
  configured: boolean;
  env_vars: string[];
}
export interface Member {
  id: string;
  userId: string;
  email: string;
  name: string | null;
  status: string;
  role: string;
  joinedAt: string;
  lastActiveAt: string | null;
}
export interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  createdAt: string;
  expiresAt: string;
  acceptUrl?: string;
  emailSent?: boolean;
}
export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt?: string | null;
  key?: string;
}
export interface Overview {
  version: string;
  issuer: string;
  uptimeSeconds: number;
  counts: { applications: number; people: number; memberships: number; pendingInvitations: number; ssoGroups: number };
  signingKey: string | null;
  discoveryUrl: string;
  jwksUrl: string;
  caCertificateUrl: string | null;
}
