/**
 * An application's branding on its hosted pages (issue 25, item 15): its name, its logo (served by
 * brand-routes.ts from our origin) and its accent colour, which reaches the page through a small
 * stylesheet of its own (`/branding/:id/theme.css`), since the pages' CSP allows no inline style.
 */
import type { Application } from '../db/schema.js';
import { logoPath } from '../applications/branding.js';

export interface PageBrand {
  name: string;
  logoUrl: string | undefined;
  themeUrl: string | undefined;
}

/** Where an application's accent stylesheet is served; the colour is its version. */
export function themePath(appId: string, color: string): string {
  return `/branding/${encodeURIComponent(appId)}/theme.css?v=${color.slice(1).toLowerCase()}`;
}

export function pageBrand(app: Pick<Application, 'id' | 'name' | 'brandAccentColor' | 'brandLogo'> | undefined): PageBrand | undefined {
  if (!app) return undefined;
  return {
    name: app.name,
    logoUrl: app.brandLogo ? logoPath(app.id, app.brandLogo) : undefined,
    themeUrl: app.brandAccentColor ? themePath(app.id, app.brandAccentColor) : undefined,
  };
}

/** The accent stylesheet: primary buttons in the application's colour, in both schemes. */
export function themeCss(color: string): string {
  return `:root{--button-bg:${color.toLowerCase()};--button-fg:#ffffff}\n`;
}
