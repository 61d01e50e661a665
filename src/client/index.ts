/** Cairn's TypeScript SDK: `new CairnClient({ apiKey })`. See docs/sdk-typescript.md. */
export { CairnClient, DEFAULT_BASE_URL } from './client.js';
export { CairnError } from './errors.js';
export { deriveIdempotencyKey, deriveSuccessorKey, type IdempotencyParts, sha256File } from './hashing.js';
export {
  modelOfRecord,
  scanTranscriptFile,
  scanTranscriptText,
  type TranscriptModels,
  withTranscriptModels,
} from './transcript.js';
export type {
  ArtifactList,
  ArtifactRecord,
  BatchDownloadUrl,
  BatchDownloadUrls,
  CairnClientOptions,
  DeleteResult,
  DownloadResult,
  DownloadToFileOptions,
  DownloadUrl,
  GateInfo,
  LinkRecord,
  ListArtifactsQuery,
  ListSessionsQuery,
  PageRef,
  ProgressFn,
  PublishOptions,
  PublishResult,
  RequestUploadUrlInput,
  SealResult,
  SessionList,
  SessionRecord,
  StreamBody,
  UnlockResult,
  UnpublishResult,
  UploadBytesOptions,
  UploadOptions,
  UploadResponseInfo,
  UploadStreamOptions,
  UploadTicket,
  WhoAmI,
} from './types.js';
