#!/usr/bin/env node
// The `gatehouse` command (installed bin, `npm start`, `npm run gatehouse`): runs the bundled
// server, dist/gatehouse.mjs (built by `npm run build`), in this same process. `serve` applies its
// launch settings to itself (server/cli/launch.ts), so nothing is started a second time: signals,
// the exit status and the desktop supervisor's IPC channel are this process's own.
import { SERVER_BUNDLE } from '../dist/server/cli/launch.js';

await import(new URL(`../${SERVER_BUNDLE}`, import.meta.url).href);
