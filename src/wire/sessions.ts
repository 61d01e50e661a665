import { type Static, Type } from '@sinclair/typebox';
import { NullableOut, Pagination, Timestamp } from './common.js';

export const SessionRecord = Type.Object(
  {
    session_id: Type.String(),
    artifact_count: Type.Integer(),
    is_sealed: Type.Boolean(),
    sealed_at: NullableOut(Timestamp),
    first_artifact_at: Timestamp,
    last_artifact_at: Timestamp,
  },
  { $id: 'Session' },
);
export type SessionRecord = Static<typeof SessionRecord>;

export const SessionList = Type.Intersect(
  [Type.Ref(Pagination), Type.Object({ sessions: Type.Array(Type.Ref(SessionRecord)) })],
  { $id: 'SessionList' },
);
export type SessionList = Static<typeof SessionList>;

export const SealResult = Type.Object(
  {
    session_id: Type.String(),
    status: Type.Literal('sealed'),
    sealed_at: Timestamp,
    artifact_count: Type.Integer(),
  },
  { $id: 'SealResult' },
);
export type SealResult = Static<typeof SealResult>;
