// `npm test` and `npm start` on an unsupported Node stop here with the version to install,
// instead of failing later in a native module.
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  console.error(
    `Cairn needs Node.js 22 or newer (24 recommended); this is Node ${process.versions.node}.\n` +
      'On a machine with an older system Node, run through `npm run node24 -- <command>` (see README.md).',
  );
  process.exit(1);
}
