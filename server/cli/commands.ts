/** Every `gatehouse` sub-command, in the order `--help` lists them. */
import type { Command } from './command.js';
import { serveCommand } from './serve.js';
import { adminTokenCommand } from './admin-token.js';

export const commands: Command[] = [serveCommand, adminTokenCommand];
