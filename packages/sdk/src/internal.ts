/**
 * Pieces cairn-store (Cairn's server and CLI, which are built on this SDK) shares with it:
 * `cairn-store-sdk/internal`. Not part of the SDK's documented API; they may change in any release.
 */
export { nodeCrypto } from './builtins.js';
export { walkPages } from './iterate.js';
export { artifactsQuery, sessionsQuery } from './query.js';
export { lacksTranscriptModels, TranscriptModelScanner } from './transcript.js';
export { CAIRN_VERSION } from './version.js';
export { uploadWireFields } from './wire-fields.js';
