import { TOOLS } from '../../src/mcp/tools.js';

/**
 * How many tools a connection lists, from the tool table itself, so that adding a tool changes
 * no test: every tool (hosted, or local with destructive tools offered), or the ones a local
 * host that cannot confirm sees (the destructive ones hidden).
 */
export const ALL_TOOLS = TOOLS.length;
export const TOOLS_WITHOUT_DESTRUCTIVE = TOOLS.filter((t) => !t.destructive).length;
