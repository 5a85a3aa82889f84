/**
 * Branding per application (issue 25, item 15): an accent colour for the hosted pages' primary
 * buttons and a logo, shown on that application's sign-in, sign-up, consent, device and error
 * pages.
 *
 * - The accent colour is `#rrggbb`. Buttons keep white text, so a colour whose contrast with white
 *   is under WCAG AA (4.5:1 for normal text) is refused with the ratio it has.
 * - The logo is a PNG or an SVG of at most 100 KB, uploaded as the request body
 *   (`PUT /api/admin/applications/:id/logo`), stored in `application_logos` and served from our
 *   origin (pages/brand-routes.ts) with headers that keep an SVG an image: it is never inlined
 *   into a page, and opened on its own it runs in a sandbox without scripts.
 *   An SVG that is more than a still drawing (scripts, event handlers, links, animation, foreign
 *   content) is refused outright all the same (svg-logo.ts).
 */
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { applicationLogos, applications, type Application } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { Problem } from '../http/problem.js';
import { createHash } from 'node:crypto';
import { getApplication } from './lookup.js';
import { svgLogoProblem } from './svg-logo.js';
import { exec, one, transaction } from '../db/store.js';

export const LOGO_MAX_BYTES = 100 * 1024;
export const LOGO_TYPES = ['image/png', 'image/svg+xml'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

/** The text colour of primary buttons, against which an accent colour is judged. */
export const BUTTON_TEXT = '#ffffff';
/** WCAG 2.x AA for normal-size text. */
export const MIN_CONTRAST = 4.5;

const HEX = /^#[0-9a-fA-F]{6}$/;

/** WCAG 2.x relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Why an accent colour cannot be used, in words, or undefined when it can. */
export function accentColorProblem(color: string): string | undefined {
  if (!HEX.test(color)) return 'must be a colour written #rrggbb';
  const ratio = contrastRatio(color, BUTTON_TEXT);
  if (ratio < MIN_CONTRAST) {
    return `has a contrast of ${(Math.floor(ratio * 100) / 100).toFixed(2)}:1 with the buttons' white text; WCAG AA needs at least ${MIN_CONTRAST}:1, so choose a darker colour`;
  }
  return undefined;
}

/** The branding part of an application record. */
export function brandingRecord(app: Pick<Application, 'id' | 'brandAccentColor' | 'brandLogo'>, issuer: string) {
  return {
    accentColor: app.brandAccentColor,
    logoUrl: app.brandLogo ? `${issuer}${logoPath(app.id, app.brandLogo)}` : null,
  };
}

/** Where an application's logo is served, with its version (so it can be cached for good). */
export function logoPath(appId: string, version: string): string {
  return `/branding/${encodeURIComponent(appId)}/logo?v=${version}`;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Whether the bytes are what the content type says. PNG: its signature. SVG: UTF-8 text that is a
 * still drawing in the SVG namespace, read as XML (svg-logo.ts).
 */
function logoProblem(type: LogoType, data: Buffer): string | undefined {
  if (data.length === 0) return 'The logo is empty.';
  if (type === 'image/png') return data.subarray(0, 8).equals(PNG_SIGNATURE) ? undefined : 'This is not a PNG image.';
  const text = data.toString('utf8');
  if (text.includes('\uFFFD')) return 'An SVG logo must be UTF-8 text.';
  return svgLogoProblem(text.replace(/^\uFEFF/, ''));
}

/** Stores an uploaded logo for the application (replacing any), and answers the updated application. */
export async function setLogo(ctx: AppContext, id: string, type: LogoType, data: Buffer, actor: string): Promise<Application> {
  await getApplication(ctx, id);
  const problem = logoProblem(type, data);
  if (problem) throw new Problem(400, 'logo_invalid', problem);
  const version = createHash('sha256').update(data).digest('hex').slice(0, 16);
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx) => {
    await exec(tx.insert(applicationLogos)
      .values({ applicationId: id, contentType: type, data, version, updatedAt: now })
      .onConflictDoUpdate({ target: applicationLogos.applicationId, set: { contentType: type, data, version, updatedAt: now } }));
    const row = await one(tx.update(applications).set({ brandLogo: version, updatedAt: now }).where(eq(applications.id, id)).returning());
    await recordAudit(tx, now, { actor, action: 'application.logo_set', applicationId: id, target: id, details: { contentType: type, bytes: data.length } });
    return row;
  });
}

/** Removes the application's logo (nothing happens when it has none). */
export async function removeLogo(ctx: AppContext, id: string, actor: string): Promise<void> {
  const app = await getApplication(ctx, id);
  if (!app.brandLogo) return;
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.delete(applicationLogos).where(eq(applicationLogos.applicationId, id)));
    await exec(tx.update(applications).set({ brandLogo: null, updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.logo_removed', applicationId: id, target: id });
  });
}

/** The stored logo of an application, or undefined. */
export async function logoOf(db: Db, appId: string) {
  return await one(db.select().from(applicationLogos).where(eq(applicationLogos.applicationId, appId)));
}
