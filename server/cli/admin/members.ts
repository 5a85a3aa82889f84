/**
 * `gatehouse invite APP EMAIL... [--role]` and `gatehouse member list APP`: invitations and
 * memberships through the running server's admin API (DESIGN §4.5, §4.6). `invite` invites the
 * valid addresses and lists the others as skipped, with why, as the panel does.
 */
import { adminCommand, ApiError, applicationPath, listAll, type AdminClient } from '../admin-client.js';
import { bodyFromFlags, type FlagTable } from '../flags.js';
import { formatTable, printJson } from '../output.js';

interface Invitation {
  email: string;
  role: string;
  acceptUrl: string;
  emailSent: boolean;
  expiresAt: string;
}

const inviteFlags: FlagTable = {
  role: { type: 'string', value: 'ROLE', help: 'member (the default) or admin', field: 'role' },
  message: { type: 'string', value: 'TEXT', help: 'a note for the invitation e-mail (up to 1000 characters)', field: 'message' },
};

/** The server's batch limit (DESIGN §4.6). */
const BATCH = 100;

interface Skipped {
  email: string;
  /** `already_member`, `already_invited`, or `invalid` (the server's message says why). */
  reason: string;
  message?: string;
}

interface InviteAnswer {
  invitations: Invitation[];
  skipped: Skipped[];
}

/**
 * Invites one batch. Like the panel: the addresses the server refuses (400 naming `body.emails.N`)
 * are set aside as skipped, and the rest are sent again; any other refusal stands.
 */
async function inviteBatch(client: AdminClient, path: string, emails: string[], extra: Record<string, unknown>): Promise<InviteAnswer> {
  try {
    return await client.request<InviteAnswer>('POST', path, { emails, ...extra });
  } catch (error) {
    const refused = new Map<number, string>();
    for (const e of error instanceof ApiError && error.code === 'validation_failed' ? error.errors : []) {
      const index = /^body\.emails\.(\d+)$/.exec(e.path)?.[1];
      if (index !== undefined) refused.set(Number(index), e.message);
    }
    if (refused.size === 0) throw error;
    const skipped = [...refused].map(([i, message]) => ({ email: emails[i]!, reason: 'invalid', message }));
    const rest = emails.filter((_, i) => !refused.has(i));
    if (rest.length === 0) return { invitations: [], skipped };
    const again = await inviteBatch(client, path, rest, extra);
    return { invitations: again.invitations, skipped: [...skipped, ...again.skipped] };
  }
}

const SKIP_REASONS: Record<string, string> = { already_member: 'already a member', already_invited: 'already invited' };

export const invite = adminCommand({
  flags: inviteFlags,
  positionals: { usage: 'APP EMAIL...', min: 2, missing: 'Give the application id and one or more e-mail addresses, e.g. `gatehouse invite notes ann@example.com`.' },
  async run({ client, values, positionals, json }) {
    const [app, ...emails] = positionals as [string, ...string[]];
    const answer: InviteAnswer = { invitations: [], skipped: [] };
    for (let i = 0; i < emails.length; i += BATCH) {
      const batch = await inviteBatch(client, `${applicationPath(app)}/invitations`, emails.slice(i, i + BATCH), bodyFromFlags(inviteFlags, values));
      answer.invitations.push(...batch.invitations);
      answer.skipped.push(...batch.skipped);
    }
    if (json) return printJson(answer);
    for (const invitation of answer.invitations) {
      const mail = invitation.emailSent ? 'e-mailed' : 'not e-mailed: share the link';
      console.log(`Invited ${invitation.email} as ${invitation.role} (${mail}, until ${invitation.expiresAt}):\n  ${invitation.acceptUrl}`);
    }
    for (const skipped of answer.skipped) {
      const why = skipped.message ?? SKIP_REASONS[skipped.reason] ?? skipped.reason;
      console.log(`Skipped ${skipped.email}: ${why} (${skipped.reason}).`);
    }
    if (answer.invitations.length === 0) console.log('No one was invited: every address was skipped.');
  },
});

interface Member {
  email: string;
  name: string | null;
  role: string;
  status: string;
  joinedAt: string;
  lastActiveAt: string;
}

/** `member list` flags: each row with a `field` is a query parameter of the list. */
const memberListFlags: FlagTable = {
  status: { type: 'string', value: 'STATUS', help: 'only active or suspended members', field: 'status' },
  role: { type: 'string', value: 'ROLE', help: 'only members or admins', field: 'role' },
  search: { type: 'string', value: 'TEXT', help: 'e-mail or name contains TEXT', field: 'q' },
};

export const memberList = adminCommand({
  flags: memberListFlags,
  positionals: { usage: 'APP', min: 1, max: 1, missing: 'Give one application id, e.g. `gatehouse member list notes`.' },
  async run({ client, values, positionals, json }) {
    const query = bodyFromFlags(memberListFlags, values) as Record<string, string>;
    const users = await listAll<Member>(client, `${applicationPath(positionals[0]!)}/users`, 'users', query);
    if (json) return printJson({ users });
    if (users.length === 0) return console.log('No members.');
    console.log(
      formatTable(
        ['EMAIL', 'NAME', 'ROLE', 'STATUS', 'JOINED', 'LAST ACTIVE'],
        users.map((u) => [u.email, u.name ?? '', u.role, u.status, u.joinedAt, u.lastActiveAt]),
      ),
    );
  },
});
