import { type Static, Type } from '@sinclair/typebox';

export const PublishBody = Type.Object(
  {
    visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')], {
      description: '`public` currently behaves like `unlisted`.',
    }),
    access: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('password')], { default: 'none' })),
    title: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    password: Type.Optional(
      Type.String({ description: 'Required with access=password (Pro only; refused for HTML). Hashed with Argon2id.' }),
    ),
  },
  { $id: 'PublishRequest' },
);
export type PublishBody = Static<typeof PublishBody>;

export const PublishResult = Type.Object(
  {
    page_id: Type.String({ pattern: '^pg_[A-Za-z0-9]{16}$' }),
    public_url: Type.String(),
    visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')]),
    access: Type.Union([Type.Literal('none'), Type.Literal('password')]),
  },
  { $id: 'PublishResult' },
);
export type PublishResult = Static<typeof PublishResult>;

export const UnpublishResult = Type.Object(
  { page_id: Type.String(), unpublished: Type.Literal(true) },
  { $id: 'UnpublishResult' },
);
export type UnpublishResult = Static<typeof UnpublishResult>;

export const GateInfo = Type.Object(
  { exists: Type.Literal(true), access: Type.Literal('password') },
  { $id: 'GateInfo' },
);
export type GateInfo = Static<typeof GateInfo>;

export const UnlockBody = Type.Object(
  { password: Type.String() },
  { $id: 'UnlockRequest', additionalProperties: false },
);
export type UnlockBody = Static<typeof UnlockBody>;

export const UnlockResult = Type.Object(
  {
    content_token: Type.String({ description: 'For `{content}/c/<slug>?token=…`.' }),
    expires_in: Type.Integer({ description: 'Seconds the token stays valid.' }),
  },
  { $id: 'UnlockResult' },
);
export type UnlockResult = Static<typeof UnlockResult>;

export const ReportBody = Type.Object(
  {
    reason: Type.Optional(
      Type.Unknown({ description: 'spam, phishing, malware, abuse, copyright or other (anything else: other).' }),
    ),
    detail: Type.Optional(Type.Unknown({ description: 'Free text, cut at 2,000 characters.' })),
  },
  { $id: 'PageReport', additionalProperties: true },
);

export const ReportReceipt = Type.Object({ received: Type.Literal(true) }, { $id: 'ReportReceipt' });
export type ReportReceipt = Static<typeof ReportReceipt>;
