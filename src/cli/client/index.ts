import type { Command } from 'commander';
import { registerAccountCommands } from './account.js';
import { registerArtifactCommands } from './artifacts.js';
import { registerCaptureCommands } from './capture.js';
import { registerLinkCommands } from './links.js';
import { registerPageCommands } from './pages.js';
import { registerPushCommand } from './push.js';
import { registerSessionCommands } from './sessions.js';
import { registerTransferCommands } from './transfer.js';

/**
 * The client commands (push, ls, get, download, rm, link, links, unlink, publish, unpublish,
 * sessions, seal, whoami, login, capture): thin edges over the TypeScript SDK, talking to a Cairn
 * server over HTTP.
 */
export function registerClientCommands(program: Command): void {
  registerPushCommand(program);
  registerArtifactCommands(program);
  registerTransferCommands(program);
  registerLinkCommands(program);
  registerPageCommands(program);
  registerSessionCommands(program);
  registerAccountCommands(program);
  registerCaptureCommands(program);
}
