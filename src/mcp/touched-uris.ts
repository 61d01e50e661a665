/**
 * The resources an event changes: the artifact's record and bytes, and its session's view. Shared
 * by the local server (which follows the stream through the SDK) and the hosted endpoint's GET
 * stream (which follows the core's feed): no import, so either side may load it.
 */
export function touchedUris(e: { type: string; data: unknown }): string[] {
  const d = e.data as Record<string, unknown>;
  const uris: string[] = [];
  const artifactId = typeof d.artifact_id === 'string' ? d.artifact_id : null;
  if (artifactId) uris.push(`cairn://artifact/${artifactId}`);
  if (artifactId && e.type.startsWith('artifact.')) uris.push(`cairn://artifact/${artifactId}/bytes`);
  if (typeof d.session_id === 'string' && (e.type.startsWith('artifact.') || e.type === 'session.sealed')) {
    uris.push(`cairn://session/${encodeURIComponent(d.session_id)}`);
  }
  return uris;
}
