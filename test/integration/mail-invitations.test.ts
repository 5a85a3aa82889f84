import { afterEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { invitations } from '../../server/db/schema.js';
import { appBody, makeApp } from '../helpers/app.js';
import { decodeQuotedPrintable, startSmtp } from '../helpers/smtp.js';
import { many, one } from '../../server/db/store.js';

const INV = '/api/admin/applications/notes/invitations';
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

async function setup(reject: string[] = []) {
  const smtp = await startSmtp({ reject });
  servers.push(smtp);
  const t = await makeApp({ config: { smtpUrl: smtp.url, smtpFrom: 'Gatehouse <noreply@gatehouse.test>' } });
  await t.admin('POST', '/api/admin/applications', appBody({ name: 'Notes & Co' }));
  return { t, smtp };
}

describe('invitation e-mail over real SMTP', () => {
  it('sends plain-text and HTML parts with the accept link, the message and the app name', async () => {
    const { t, smtp } = await setup();
    const res = await t.admin('POST', INV, { emails: ['ann@example.com'], message: 'Hi Ann <3, join us' });
    expect(res.statusCode).toBe(201);
    const inv = res.json().invitations[0];
    expect(inv).toMatchObject({ emailSent: true, emailError: null });
    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.from).toBe('noreply@gatehouse.test');
    expect(mail.to).toEqual(['ann@example.com']);
    expect(mail.raw).toMatch(/^Subject: You are invited to Notes & Co$/m);
    expect(mail.raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(mail.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    const decoded = decodeQuotedPrintable(mail.raw);
    expect(decoded).toContain(inv.acceptUrl);
    expect(decoded).toContain('Hi Ann <3, join us');
    expect(decoded).toContain('Hi Ann &lt;3, join us');
    expect(decoded).toContain(`<a href="${inv.acceptUrl}">Accept the invitation</a>`);
    expect(decoded).toContain('<p>You have been invited to join Notes &amp; Co as member.</p>');
    const row = (await one(t.db.select().from(invitations).where(eq(invitations.id, inv.id))))!;
    expect(row).toMatchObject({ emailSent: true, emailError: null, lastSentAt: t.clock.now() });
  });

  it('records a refused recipient on the invitation without losing it; others still go out', async () => {
    const { t, smtp } = await setup(['bad@example.com']);
    const res = await t.admin('POST', INV, { emails: ['bad@example.com', 'good@example.com'] });
    expect(res.statusCode).toBe(201);
    const [bad, good] = res.json().invitations;
    expect(bad).toMatchObject({ email: 'bad@example.com', status: 'pending', emailSent: false, emailError: expect.stringContaining('550') });
    expect(good).toMatchObject({ email: 'good@example.com', emailSent: true, emailError: null });
    expect(smtp.received.map((m) => m.to)).toEqual([['good@example.com']]);
    const listed = (await t.admin('GET', INV)).json().invitations;
    expect(listed.map((i: { emailSent: boolean }) => i.emailSent)).toEqual([false, true]);
    expect(listed[0].emailError).toContain('550');
  });

  it('keeps invitations when the SMTP server is unreachable', async () => {
    const smtp = await startSmtp();
    const url = smtp.url;
    await smtp.close();
    const t = await makeApp({ config: { smtpUrl: `${url}/?connectionTimeout=2000` } });
    await t.admin('POST', '/api/admin/applications', appBody());
    const res = await t.admin('POST', INV, { emails: ['ann@example.com'] });
    expect(res.statusCode).toBe(201);
    expect(res.json().invitations[0]).toMatchObject({ status: 'pending', emailSent: false, emailError: expect.stringMatching(/ECONNREFUSED|connect/i) });
    expect(await many(t.db.select().from(invitations))).toHaveLength(1);
  });

  it('resend e-mails the new link', async () => {
    const { t, smtp } = await setup();
    const inv = (await t.admin('POST', INV, { emails: ['ann@example.com'] })).json().invitations[0];
    const res = await t.admin('POST', `${INV}/${inv.id}/resend`);
    expect(res.statusCode).toBe(200);
    expect(res.json().emailSent).toBe(true);
    expect(smtp.received).toHaveLength(2);
    expect(decodeQuotedPrintable(smtp.received[1]!.raw)).toContain(res.json().acceptUrl);
    expect(decodeQuotedPrintable(smtp.received[1]!.raw)).not.toContain(inv.acceptUrl);
  });
});

describe('bulk invitation e-mail', () => {
  it('delivers 100 invitations, a few connections at a time', async () => {
    const { t, smtp } = await setup();
    const res = await t.admin('POST', INV, { emails: Array.from({ length: 100 }, (_, i) => `p${i}@example.com`) });
    expect(res.statusCode).toBe(201);
    expect(res.json().invitations.every((i: { emailSent: boolean }) => i.emailSent)).toBe(true);
    expect(smtp.received).toHaveLength(100);
    expect(new Set(smtp.received.map((m) => m.to[0])).size).toBe(100);
  });
});
