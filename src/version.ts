import { readFileSync } from 'node:fs';

/**
 * Cairn's one version, from package.json: the CLI's --version, the OpenAPI document's
 * info.version and the TypeScript SDK's User-Agent. The MCP server keeps its own 1.x line
 * (MCP_SERVER_VERSION), which the spec ties to the tools' compatibility, not to releases.
 * Read from the file so that a release changes one place; src/ and dist/ both sit one level
 * below it.
 */
export const CAIRN_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
