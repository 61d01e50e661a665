/** The artifact an upload makes: the last path segment of its URL. */
export function artifactIdOfUploadUrl(uploadUrl: string): string {
  const segment = new URL(uploadUrl).pathname.split('/').filter(Boolean).at(-1) ?? '';
  return decodeURIComponent(segment);
}
