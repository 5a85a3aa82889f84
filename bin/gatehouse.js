#!/usr/bin/env node
// The `gatehouse` command (installed bin, `npm start`, `npm run gatehouse`): runs the bundled
// server, dist/gatehouse.mjs (built by `npm run build`).
//
// `serve` is long-running and wants launch settings that only exist if given before the process
// starts (server/cli/launch.ts). Started without them — `gatehouse serve` from a shell, or
// `npm start` on any OS, where `VAR=value node …` would be POSIX-only — this process runs the
// bundle once more as a child with them, and only relays: signals in, exit status and IPC
// messages out. The child has an IPC channel to us, so if we die it sees `disconnect` and stops.
// Launchers that apply the settings themselves (Electron, bench, tests) start the bundle directly.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVER_BUNDLE, SERVE_ENV, launchSettingsApplied, serveNodeArgs } from '../dist/server/cli/launch.js';

const bundle = new URL(`../${SERVER_BUNDLE}`, import.meta.url);
const args = process.argv.slice(2);

if (args[0] !== 'serve' || launchSettingsApplied(process.execArgv, process.env)) {
  await import(bundle.href);
} else {
  const child = spawn(process.execPath, [...process.execArgv, ...serveNodeArgs(process.env), fileURLToPath(bundle), ...args], {
    env: { ...process.env, ...SERVE_ENV },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // Its own process group on POSIX, so a terminal's Ctrl-C reaches it once (relayed by us),
    // not twice; Windows has no process groups and would open a console window instead.
    detached: process.platform !== 'win32',
  });
  const relay = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, relay);
  child.on('message', (message) => process.send?.(message));
  process.on('message', (message) => child.connected && child.send(message));
  child.on('exit', (code, signal) => {
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(name, relay);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
