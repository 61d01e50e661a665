import { type Static, Type } from '@sinclair/typebox';
import { Timestamp } from './common.js';

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
    rate_limit_sustained: Type.Integer({ description: 'Requests per second, sustained.' }),
    rate_limit_burst: Type.Integer({ description: 'Requests a burst may hold.' }),
    // Beyond the spec's eleven (additive): what is left, so an agent need not do the arithmetic.
    usage_storage_bytes_remaining: Type.Integer({ description: 'plan_storage_limit_bytes - usage_storage_bytes.' }),
    usage_requests_remaining_month: Type.Integer({
      description: 'plan_requests_limit_month - usage_requests_month (0 when used up).',
    }),
    requests_month_resets_at: Type.String({
      ...Timestamp,
      description: 'When the monthly request count starts again: the first instant of the next UTC month.',
    }),
    rate_limit_unit: Type.Literal('requests_per_second', { description: 'The unit of rate_limit_sustained.' }),
  },
  { $id: 'WhoAmI' },
);
export type WhoAmI = Static<typeof WhoAmI>;

export const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' });
export type Health = Static<typeof Health>;
