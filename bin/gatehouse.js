#!/usr/bin/env node
// The installed `gatehouse` bin: runs the compiled CLI (built by `npm run build`).
import '../dist/server/cli.js';
