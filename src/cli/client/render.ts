import type { ArtifactRecord, SessionRecord, WhoAmI } from 'cairn-store-sdk';
import { formatCount } from '../../shared/units.js';
import {
  type Column,
  clip,
  formatAge,
  formatBytes,
  formatUntil,
  type Paint,
  renderFields,
  renderTable,
  terminalWidth,
} from './format.js';

/** Human views of the API's records. */

const NAME_WIDTH = 40;

export function artifactTable(rows: ArtifactRecord[], paint: Paint, now = Date.now(), width = terminalWidth()): string {
  const columns: Column<ArtifactRecord>[] = [
    { header: 'ID', value: (a) => a.artifact_id, style: 'cyan' },
    { header: 'NAME', value: (a) => clip(a.filename, NAME_WIDTH), minWidth: 10 },
    { header: 'TYPE', value: (a) => a.content_type.split(';')[0] ?? a.content_type, style: 'dim', minWidth: 10 },
    { header: 'SIZE', value: (a) => formatBytes(a.size_bytes), right: true },
    { header: 'CREATED', value: (a) => formatAge(a.created_at, now) },
    { header: 'SESSION', value: (a) => a.session_id ?? '-', minWidth: 7 },
    { header: 'AGENT', value: (a) => a.agent_id ?? '-', style: 'dim', minWidth: 5, optional: true },
  ];
  return renderTable(rows, columns, paint, width);
}

export function artifactDetail(a: ArtifactRecord, paint: Paint, now = Date.now()): string {
  const fields: [string, string][] = [
    ['ID', paint('cyan', a.artifact_id)],
    ['Name', a.filename],
    ['Type', a.content_type],
    ['Size', `${formatBytes(a.size_bytes)} (${a.size_bytes} bytes)`],
    ['SHA-256', a.content_hash],
    ['Session', a.session_id ?? '-'],
    ['Agent', a.agent_id ?? '-'],
    ['Created', `${a.created_at} (${formatAge(a.created_at, now)})`],
    ['Expires', a.expires_at ? `${a.expires_at} (${formatUntil(a.expires_at, now)})` : 'never'],
    ['Page', a.page ? `${paint('green', a.page.public_url)} (${a.page.visibility})` : '-'],
  ];
  const meta = Object.entries(a.metadata ?? {});
  if (meta.length === 0) fields.push(['Metadata', '-']);
  meta.forEach(([k, v], i) => {
    fields.push([i === 0 ? 'Metadata' : '', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`]);
  });
  return renderFields(fields, paint);
}

export function sessionTable(rows: SessionRecord[], paint: Paint, now = Date.now(), width = terminalWidth()): string {
  const columns: Column<SessionRecord>[] = [
    { header: 'SESSION', value: (s) => s.session_id, style: 'cyan', minWidth: 12 },
    { header: 'ARTIFACTS', value: (s) => String(s.artifact_count), right: true },
    { header: 'SEALED', value: (s) => (s.is_sealed ? 'yes' : 'no') },
    { header: 'FIRST', value: (s) => formatAge(s.first_artifact_at, now) },
    { header: 'LAST', value: (s) => formatAge(s.last_artifact_at, now) },
  ];
  return renderTable(rows, columns, paint, width);
}

const count = formatCount;
const percent = (used: number, limit: number) => (limit > 0 ? ` (${Math.floor((used / limit) * 100)}%)` : '');

export function whoamiView(w: WhoAmI, extra: [string, string][], paint: Paint): string {
  return renderFields(
    [
      ['Tenant', paint('bold', w.tenant_name)],
      ['Plan', w.plan],
      ['API key', `…${w.api_key_last_4}`],
      [
        'Storage',
        `${formatBytes(w.usage_storage_bytes)} of ${formatBytes(w.plan_storage_limit_bytes)}` +
          percent(w.usage_storage_bytes, w.plan_storage_limit_bytes),
      ],
      [
        'Requests',
        `${count(w.usage_requests_month)} of ${count(w.plan_requests_limit_month)} this month` +
          percent(w.usage_requests_month, w.plan_requests_limit_month) +
          (w.requests_month_resets_at ? `, resets ${w.requests_month_resets_at.slice(0, 10)}` : ''),
      ],
      ['Links', `${count(w.active_links)} of ${count(w.max_active_links)} active`],
      ['Rate limit', `${w.rate_limit_sustained}/s, burst ${w.rate_limit_burst}`],
      ...extra,
    ],
    paint,
  );
}
