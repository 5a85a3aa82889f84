/** The control-panel window: loads {server}/admin/ with the preload bridge and secure preferences. */
import { BrowserWindow } from 'electron';
import { join } from 'node:path';
import { secureWebPreferences } from './security.js';

let win: BrowserWindow | undefined;

export function panelWindow(): BrowserWindow | undefined {
  return win && !win.isDestroyed() ? win : undefined;
}

export function showPanel(serverUrl: string | undefined, iconPath: string): BrowserWindow {
  const existing = panelWindow();
  if (existing) {
    if (existing.isMinimized()) existing.restore();
    existing.show();
    existing.focus();
    return existing;
  }
  win = new BrowserWindow({
    width: 1200,
    height: 820,
    minWidth: 760,
    minHeight: 520,
    title: 'Gatehouse',
    icon: iconPath,
    show: false,
    autoHideMenuBar: true,
    webPreferences: { ...secureWebPreferences, preload: join(import.meta.dirname, 'preload.cjs') },
  });
  win.once('ready-to-show', () => win?.show());
  if (serverUrl) void win.loadURL(`${serverUrl}/admin/`);
  else void win.loadURL(`data:text/html;charset=utf-8,${encodeURIComponent(startingPage)}`);
  return win;
}

/** Points the window at the (re)started server. */
export function loadPanel(serverUrl: string): void {
  const w = panelWindow();
  if (w) void w.loadURL(`${serverUrl}/admin/`);
}

const startingPage = `<!doctype html><meta charset="utf-8"><title>Gatehouse</title>
<body style="font-family:system-ui;display:grid;place-items:center;height:90vh;color:#555">
<p>Starting the Gatehouse server…</p></body>`;
