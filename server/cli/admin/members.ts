/**
 * `gatehouse invite APP EMAIL... [--role]` and `gatehouse member list APP`: invitations and
 * memberships through the running server's admin API (DESIGN §4.5, §4.6).
 */
import { adminCommand, applicationPath, listAll } from '../admin-client.js';
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

export const invite = adminCommand({
  flags: inviteFlags,
  positionals: { usage: 'APP EMAIL...', min: 2, missing: 'Give the application id and one or more e-mail addresses, e.g. `gatehouse invite notes ann@example.com`.' },
  async run({ client, values, positionals, json }) {
    const [app, ...emails] = positionals as [string, ...string[]];
    const answer = await client.request<{ invitations: Invitation[]; skipped: { email: string; reason: string }[] }>(
      'POST',
      `${applicationPath(app)}/invitations`,
      { emails, ...bodyFromFlags(inviteFlags, values) },
    );
    if (json) return printJson(answer);
    for (const invitation of answer.invitations) {
      const mail = invitation.emailSent ? 'e-mailed' : 'not e-mailed: share the link';
      console.log(`Invited ${invitation.email} as ${invitation.role} (${mail}, until ${invitation.expiresAt}):\n  ${invitation.acceptUrl}`);
    }
    for (const skipped of answer.skipped) {
      console.log(`Skipped ${skipped.email}: ${skipped.reason === 'already_member' ? 'already a member' : 'already invited'} (${skipped.reason}).`);
    }
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
