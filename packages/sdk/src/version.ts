/**
 * Cairn's one release version: the CLI's --version, the OpenAPI document's info.version and this
 * SDK's User-Agent. It must equal package.json's `version` (test/e2e/version.test.ts checks it):
 * a constant rather than a read of package.json, because the SDK also runs compiled on its own,
 * away from the package. The MCP server keeps its own 1.x line (MCP_SERVER_VERSION).
 */
export const CAIRN_VERSION = '0.1.0';
