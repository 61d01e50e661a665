import { type Static, Type } from '@sinclair/typebox';

export const WhoAmI = Type.Object(
  {
    tenant_name: Type.String(),
    plan: Type.Union([Type.Literal('free'), Type.Literal('pro')]),
    api_key_last_4: Type.String(),
    usage_storage_bytes: Type.Integer(),
    plan_storage_limit_bytes: Type.Integer(),
    usage_requests_month: Type.Integer(),
    plan_requests_limit_month: Type.Integer(),
    active_links: Type.Integer(),
    max_active_links: Type.Integer(),
    rate_limit_sustained: Type.Integer(),
    rate_limit_burst: Type.Integer(),
  },
  { $id: 'WhoAmI' },
);
export type WhoAmI = Static<typeof WhoAmI>;

export const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' });
export type Health = Static<typeof Health>;
