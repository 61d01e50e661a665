import { performance } from 'node:perf_hooks';
import { apiCall, putFile, sendFile, type TimedSend } from './transfer.js';

/**
 * Cairn's two ways to upload one large file from the disk, as a client does them, timed end to
 * end as the client sees them (the file is sent once, streamed), with the time of each step:
 *
 * - `presigned`: POST upload-url, the PUT of the file to the signed URL, POST complete.
 * - `tus`: POST creation (tus 1.0.0), then one PATCH of the whole file; the artifact is active
 *   when the PATCH's 204 arrives, so that answer ends the upload.
 *
 * Shared by the big-file rows (big-files.ts) and the A/B figures (ab.ts).
 */
export type UploadFlow = 'presigned' | 'tus';

export interface FlowResult {
  artifactId: string;
  /** From the first request sent to the last answer received. */
  ms: number;
  /** Each step's duration, in order (for the log: where the time went). */
  steps: [name: string, ms: number][];
}

interface Target {
  apiUrl: string;
  key: string;
  file: string;
  bytes: number;
}

export function uploadFlow(flow: UploadFlow, target: Target): Promise<FlowResult> {
  return flow === 'presigned' ? presigned(target) : tus(target);
}

/** Times a flow step by step: a whole step with `step`, a request with a body with `sent`. */
class StepClock {
  private readonly started = performance.now();
  readonly steps: FlowResult['steps'] = [];

  async step<T>(name: string, run: () => Promise<T>): Promise<T> {
    const t = performance.now();
    const value = await run();
    this.steps.push([name, performance.now() - t]);
    return value;
  }

  /** A body's request as two steps: until its last byte was sent, then until its answer came. */
  async sent(what: string, run: () => Promise<TimedSend>): Promise<TimedSend> {
    const r = await run();
    this.steps.push([`${what} body sent`, r.sentMs], [`${what} answered after`, r.ms - r.sentMs]);
    return r;
  }

  result(artifactId: string): FlowResult {
    return { artifactId, ms: performance.now() - this.started, steps: this.steps };
  }
}

async function presigned({ apiUrl, key, file, bytes }: Target): Promise<FlowResult> {
  const clock = new StepClock();
  const ticket = await clock.step('upload-url', () =>
    apiCall<{ artifact_id: string; upload_url: string; upload_headers: Record<string, string> }>(
      apiUrl,
      key,
      'POST',
      '/v1/artifacts/upload-url',
      { filename: 'big.bin', size_bytes: bytes },
    ),
  );
  const put = await clock.sent('PUT', () => putFile(ticket.upload_url, file, bytes, ticket.upload_headers));
  if (put.value.status !== 200) throw new Error(`presigned PUT → ${put.value.status}: ${put.value.body}`);
  await clock.step('complete', () => apiCall(apiUrl, key, 'POST', `/v1/artifacts/${ticket.artifact_id}/complete`));
  return clock.result(ticket.artifact_id);
}

const TUS = { 'tus-resumable': '1.0.0' };

async function tus({ apiUrl, key, file, bytes }: Target): Promise<FlowResult> {
  const clock = new StepClock();
  const location = await clock.step('POST', async () => {
    const res = await fetch(`${apiUrl}/v1/uploads/tus`, {
      method: 'POST',
      headers: {
        ...TUS,
        authorization: `Bearer ${key}`,
        'upload-length': String(bytes),
        'upload-metadata': `filename ${Buffer.from('big.bin').toString('base64')}`,
      },
    });
    const text = await res.text();
    const at = res.headers.get('location');
    if (res.status !== 201 || !at) throw new Error(`tus POST → ${res.status}: ${text.slice(0, 300)}`);
    return at;
  });
  const patch = await clock.sent('PATCH', () =>
    sendFile('PATCH', location, file, bytes, {
      ...TUS,
      authorization: `Bearer ${key}`,
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    }),
  );
  if (patch.value.status !== 204) throw new Error(`tus PATCH → ${patch.value.status}: ${patch.value.body}`);
  // The last segment of the upload's URL is the artifact's id (the contract).
  return clock.result(new URL(location).pathname.split('/').pop() ?? '');
}

/** `upload-url 0.01 s, PUT body sent 2.10 s, …` */
export const stepsLabel = (steps: FlowResult['steps']) =>
  steps.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(2)} s`).join(', ');
