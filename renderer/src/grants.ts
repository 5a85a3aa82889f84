/** The grant types an application may use, in words for the panel (spec grants-and-logout.md). */
import type { ClientType, GrantType } from './api';

export const DEVICE_GRANT: GrantType = 'urn:ietf:params:oauth:grant-type:device_code';

export interface GrantInfo {
  id: GrantType;
  label: string;
  help: string;
  /** Why it cannot be chosen for this client type, if it cannot. */
  unavailable?: (clientType: ClientType) => string | undefined;
}

export const GRANTS: GrantInfo[] = [
  {
    id: 'authorization_code',
    label: 'People sign in through the browser',
    help: 'The usual sign-in: the app sends people to Gatehouse and gets a code back (authorization code with PKCE).',
  },
  {
    id: 'refresh_token',
    label: 'Stay signed in (refresh tokens)',
    help: 'Lets the app renew access without asking again, when it asks for the offline_access scope.',
  },
  {
    id: 'client_credentials',
    label: 'Machine-to-machine (client credentials)',
    help: "The app's back end gets tokens for itself with its client secret, with no person involved: for jobs and services that call each other's APIs.",
    unavailable: (clientType) => (clientType === 'web' ? undefined : 'Only for web apps: a machine must keep the client secret.'),
  },
  {
    id: DEVICE_GRANT,
    label: 'Devices without a browser (device sign-in)',
    help: 'For a TV, a command-line tool or a build box: the device shows a short code, and a person approves it at the /device page on their phone or computer.',
  },
];
