/**
 * The scripted agent every framework test runs: what a model would decide next, read from what it
 * has seen so far (the whole conversation as text). It stores a report, publishes the artifact the
 * store answered with, then answers with the page's URL; so each step needs the previous tool
 * result to have come back through the framework's loop.
 */

export const REPORT = { filename: 'report.md', text: '# Weekly report\n\nAll green.\n' };
export const SESSION = 'integration-run';

export type Move = { tool: string; args: Record<string, unknown> } | { text: string };

const ARTIFACT_ID = /art_[A-Za-z0-9]{16}/;
// A page URL as the API writes it: https://…/p/<token> or http://127.0.0.1:port/p/…, quoted in JSON.
const PAGE_URL = /"public_url\\?"\s*:\s*\\?"(https?:\/\/[^"\\]+)/;

export function nextMove(seen: string): Move {
  const page = PAGE_URL.exec(seen)?.[1];
  if (page) return { text: `Stored ${REPORT.filename} and shared it as a page: ${page}` };
  const id = ARTIFACT_ID.exec(seen)?.[0];
  if (id) return { tool: 'publish_artifact', args: { artifact_id: id, title: 'Weekly report' } };
  return {
    tool: 'store_artifact',
    args: { ...REPORT, session_id: SESSION, model: 'scripted-model', metadata: { type: 'report' } },
  };
}
