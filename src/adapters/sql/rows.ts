import { createHash } from 'node:crypto';
import type {
  ApiKeyRow,
  ArtifactRow,
  ArtifactStatus,
  LinkRow,
  PageRow,
  SessionRow,
  TenantRow,
} from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import type { PlanName } from '../../shared/plan-name.js';
import type { Dialect } from './dialect.js';

/**
 * Metadata rows as both engines return them: snake_case columns, integer milliseconds (pg's int8
 * is read as a number, see postgres/database.ts). They differ only in how a boolean and the
 * metadata column come back, which the mappers below accept either way.
 */

export interface TenantRecord {
  id: string;
  name: string;
  plan: string;
  suspended: boolean | number;
  created_at: number;
  storage_bytes: number;
}

export interface ApiKeyRecord {
  id: string;
  tenant_id: string;
  hash: string;
  last4: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ArtifactRecord {
  id: string;
  tenant_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  content_hash: string;
  metadata: string | Record<string, unknown>;
  session_id: string | null;
  agent_id: string | null;
  created_at: number;
  expires_at: number | null;
  deleted_at: number | null;
  status: string;
}

export interface SessionRecord {
  tenant_id: string;
  session_id: string;
  artifact_count: number;
  sealed_at: number | null;
  first_artifact_at: number;
  last_artifact_at: number;
}

export interface LinkRecord {
  id: string;
  tenant_id: string;
  artifact_id: string;
  created_at: number;
  expires_at: number;
}

export interface PageRecord {
  slug: string;
  tenant_id: string;
  artifact_id: string;
  visibility: string;
  access: string;
  title: string | null;
  password_hash: string | null;
  live: boolean | number;
  taken_down_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toApiKey = (r: ApiKeyRecord): ApiKeyRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  hash: r.hash,
  last4: r.last4,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const toSession = (r: SessionRecord): SessionRow => ({
  tenantId: r.tenant_id,
  sessionId: r.session_id,
  artifactCount: r.artifact_count,
  sealedAt: r.sealed_at,
  firstArtifactAt: r.first_artifact_at,
  lastArtifactAt: r.last_artifact_at,
});

export const toLink = (r: LinkRecord): LinkRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  artifactId: r.artifact_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** Booleans come back as 0/1 from SQLite and as booleans from PostgreSQL. */
const bool = (b: boolean | number): boolean => b === true || b === 1;
/** Metadata comes back as JSON text from SQLite and already parsed (jsonb) from PostgreSQL. */
const metadataOf = (m: string | Record<string, unknown>): Record<string, unknown> =>
  typeof m === 'string' ? (JSON.parse(m) as Record<string, unknown>) : m;

export const toTenant = (r: TenantRecord): TenantRow => ({
  id: r.id,
  name: r.name,
  plan: r.plan as PlanName,
  suspended: bool(r.suspended),
  createdAt: r.created_at,
  storageBytes: r.storage_bytes,
});

export const toArtifact = (r: ArtifactRecord): ArtifactRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  filename: r.filename,
  contentType: r.content_type,
  sizeBytes: r.size_bytes,
  contentHash: r.content_hash,
  metadata: metadataOf(r.metadata),
  sessionId: r.session_id,
  agentId: r.agent_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  deletedAt: r.deleted_at,
  status: r.status as ArtifactStatus,
});

export const toPage = (r: PageRecord): PageRow => ({
  slug: r.slug,
  tenantId: r.tenant_id,
  artifactId: r.artifact_id,
  visibility: r.visibility as PageRow['visibility'],
  access: r.access as PageRow['access'],
  title: r.title,
  passwordHash: r.password_hash,
  live: bool(r.live),
  takenDownAt: r.taken_down_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * An artifact as the values of an `INSERT INTO artifacts (id, tenant_id, filename, content_type,
 * size_bytes, content_hash, metadata, session_id, agent_id, created_at, expires_at, deleted_at,
 * status)`, in that order, metadata as JSON text (SQLite stores it so; pg casts it to jsonb).
 */
export function artifactInsertValues(a: ArtifactRow): unknown[] {
  return [
    a.id,
    a.tenantId,
    a.filename,
    a.contentType,
    a.sizeBytes,
    a.contentHash,
    JSON.stringify(a.metadata),
    a.sessionId,
    a.agentId,
    a.createdAt,
    a.expiresAt,
    a.deletedAt,
    a.status,
  ];
}

/** `alias.column, …`: a select list naming its columns (joins, prepared statements). */
export const columnList = (alias: string, columns: readonly string[]): string =>
  columns.map((c) => `${alias}.${c}`).join(', ');

/** Column lists of the tables, in schema order: explicit select lists for joins and prepared statements. */
export const TENANT_COLUMNS = ['id', 'name', 'plan', 'suspended', 'created_at', 'storage_bytes'] as const;
export const ARTIFACT_COLUMNS = [
  'id',
  'tenant_id',
  'filename',
  'content_type',
  'size_bytes',
  'content_hash',
  'metadata',
  'session_id',
  'agent_id',
  'created_at',
  'expires_at',
  'deleted_at',
  'status',
] as const;
export const API_KEY_COLUMNS = ['id', 'tenant_id', 'hash', 'last4', 'created_at', 'revoked_at'] as const;
export const LINK_COLUMNS = ['id', 'tenant_id', 'artifact_id', 'created_at', 'expires_at'] as const;
export const PAGE_COLUMNS = [
  'slug',
  'tenant_id',
  'artifact_id',
  'visibility',
  'access',
  'title',
  'password_hash',
  'live',
  'taken_down_at',
  'created_at',
  'updated_at',
] as const;
export const SESSION_COLUMNS = [
  'tenant_id',
  'session_id',
  'artifact_count',
  'sealed_at',
  'first_artifact_at',
  'last_artifact_at',
] as const;

/** Values longer than this are indexed by digest where the dialect asks for it (see Dialect). */
const MAX_INLINE_VALUE_BYTES = 256;

/**
 * The indexed form of a top-level metadata value: a string as itself, a number or boolean as its
 * JSON text; anything else (object, array, null) is not indexed and so never matches a filter.
 */
export function metadataIndexValue(d: Dialect, value: unknown): string | null {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = JSON.stringify(value);
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else return null;
  return metadataMatchValue(d, text);
}

/** A filter's value as the index holds it (long values by digest, applied alike to stored values). */
export function metadataMatchValue(d: Dialect, text: string): string {
  if (!d.digestsLongMetadata || Buffer.byteLength(text, 'utf8') <= MAX_INLINE_VALUE_BYTES) return text;
  return `\u0001sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** U+0000 and lone surrogates: valid in a JS string and in JSON text, refused by PostgreSQL text and jsonb. */
const UNSTORABLE = /\u0000|\p{Cs}/u;

/**
 * Refuses metadata PostgreSQL cannot store as `invalid_request` (a client error) rather than a
 * failed insert; on every engine, so an artifact's fate does not depend on where it is kept.
 */
export function assertStorableMetadata(metadata: unknown): void {
  const visit = (v: unknown): boolean => {
    if (typeof v === 'string') return !UNSTORABLE.test(v);
    if (Array.isArray(v)) return v.every(visit);
    if (v !== null && typeof v === 'object') {
      return Object.entries(v).every(([k, inner]) => !UNSTORABLE.test(k) && visit(inner));
    }
    return true;
  };
  if (!visit(metadata)) {
    throw new CairnError('invalid_request', 'metadata strings must not contain U+0000 or unpaired surrogates.');
  }
}

/**
 * Several records in one row of a join, read as an array of values (SQLite's raw mode, pg's
 * array row mode). Letting the driver build an object with a key per aliased column, then
 * splitting it by prefix, cost as much as the query itself on the hottest reads (a GET of a
 * record, a key lookup). `new JoinedColumns({ a: ARTIFACT_COLUMNS, t: TENANT_COLUMNS })` gives
 * the select list (`a.id, …, t.id, …`) and takes each record back out of the row by position.
 * Statements using it are built once, as module constants: statements are cached by their SQL
 * text, and a text built anew per call is flattened and hashed whole at every lookup.
 */
export class JoinedColumns<K extends string> {
  readonly list: string;
  private readonly parts: Record<K, { offset: number; columns: readonly string[] }>;

  constructor(parts: Record<K, readonly string[]>) {
    const lists: string[] = [];
    const at = {} as Record<K, { offset: number; columns: readonly string[] }>;
    let offset = 0;
    for (const alias of Object.keys(parts) as K[]) {
      const columns = parts[alias];
      at[alias] = { offset, columns };
      lists.push(columnList(alias, columns));
      offset += columns.length;
    }
    this.list = lists.join(', ');
    this.parts = at;
  }

  /** Part `alias` of a row; null when its first column (its key) is null, a LEFT JOIN's miss. */
  record<T>(values: readonly unknown[], alias: K): T | null {
    const { offset, columns } = this.parts[alias];
    if (values[offset] === null) return null;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) out[columns[i]!] = values[offset + i];
    return out as T;
  }
}
