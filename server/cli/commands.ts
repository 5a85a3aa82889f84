/** Every `gatehouse` sub-command, in the order `--help` lists them. */
import type { Command } from './command.js';
import { serveCommand } from './serve.js';
import { adminTokenCommand } from './admin-token.js';
import { backupCommand } from './backup.js';
import { restoreCommand } from './restore.js';
import { statusCommand } from './status.js';
import { rotateKeysCommand } from './rotate-keys.js';

export const commands: Command[] = [serveCommand, adminTokenCommand, rotateKeysCommand, backupCommand, restoreCommand, statusCommand];
