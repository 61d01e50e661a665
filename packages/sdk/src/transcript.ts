import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

/**
 * The models a transcript names, for the conventional metadata (`model`, `model_source`,
 * `models_used`), read as the hosted service's capture hook reads them. Recognised: Claude Code
 * session JSONL (`message.model` of assistant records; its `<synthetic>` placeholder is not a
 * model, and records with `isSidechain: true` are a subagent's) and OpenAI-shaped records
 * (`model` on a chat message or a chat completion response). Lines that are not JSON are skipped.
 */
export interface TranscriptModels {
  /**
   * The model of the last main-loop record (a subagent's records do not count), or null; when
   * every record is a subagent's, the last of those.
   */
  model: string | null;
  /** Every distinct model, subagents' included, sorted. */
  modelsUsed: string[];
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const name = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' && v !== '<synthetic>' && v.length <= 200 ? v.trim() : null;

/** The model a record names, if any. */
export function modelOfRecord(r: unknown): string | null {
  if (!isRec(r)) return null;
  if (isRec(r.message) && (r.type === 'assistant' || r.message.role === 'assistant')) {
    return name(r.message.model);
  }
  if (r.role === 'assistant' || Array.isArray(r.choices) || r.object === 'chat.completion') return name(r.model);
  if (isRec(r.response)) return name(r.response.model);
  return null;
}

export class TranscriptModelScanner {
  private readonly seen = new Set<string>();
  private lastMain: string | null = null;
  private lastSide: string | null = null;

  /** One record (already parsed). */
  addRecord(r: unknown): void {
    const m = modelOfRecord(r);
    if (m === null) return;
    this.seen.add(m);
    if (isRec(r) && r.isSidechain === true) this.lastSide = m;
    else this.lastMain = m;
  }

  /** One NDJSON line. */
  addLine(line: string): void {
    const t = line.trim();
    if (!t.startsWith('{')) return;
    try {
      this.addRecord(JSON.parse(t));
    } catch {
      // Not a JSON line (a cut last line, a log line): it names no model.
    }
  }

  /** A whole document: NDJSON, a JSON array of records, or `{"messages": [...]}`. */
  addText(text: string): void {
    const whole = text.trim();
    if (whole.startsWith('[') || whole.startsWith('{')) {
      try {
        const v: unknown = JSON.parse(whole);
        const list = Array.isArray(v) ? v : isRec(v) && Array.isArray(v.messages) ? v.messages : null;
        if (list) {
          for (const r of list) this.addRecord(r);
          return;
        }
      } catch {
        // NDJSON: line by line below.
      }
    }
    for (const line of text.split('\n')) this.addLine(line);
  }

  result(): TranscriptModels {
    return { model: this.lastMain ?? this.lastSide, modelsUsed: [...this.seen].sort() };
  }
}

export function scanTranscriptText(text: string): TranscriptModels {
  const s = new TranscriptModelScanner();
  s.addText(text);
  return s.result();
}

/** A whole-document JSON transcript (array or `messages`) is parsed whole up to this size. */
const WHOLE_JSON_MAX_BYTES = 32 * 1024 * 1024;

/** Reads a transcript file line by line (memory does not grow with the file). */
export async function scanTranscriptFile(path: string): Promise<TranscriptModels> {
  const s = new TranscriptModelScanner();
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) s.addLine(line);
  const found = s.result();
  if (found.modelsUsed.length > 0 || (await stat(path)).size > WHOLE_JSON_MAX_BYTES) return found;
  const { readFile } = await import('node:fs/promises');
  return scanTranscriptText(await readFile(path, 'utf8'));
}

/** Whether a transcript upload's metadata lacks something a scan of its models would fill. */
export function lacksTranscriptModels(metadata: Record<string, unknown> | undefined): boolean {
  return metadata?.model === undefined || metadata.models_used === undefined;
}

/**
 * The metadata with what the transcript says filled in, never over what the caller set:
 * `models_used` unless set; `model` and `model_source: "transcript"` unless `model` is set (a
 * declared model wins, and is then not marked as captured).
 */
export function withTranscriptModels(
  metadata: Record<string, unknown> | undefined,
  found: TranscriptModels,
): Record<string, unknown> | undefined {
  if (found.modelsUsed.length === 0 || found.model === null) return metadata;
  const out: Record<string, unknown> = { ...metadata };
  if (out.models_used === undefined) out.models_used = found.modelsUsed.join(',');
  if (out.model === undefined) {
    out.model = found.model;
    if (out.model_source === undefined) out.model_source = 'transcript';
  }
  return out;
}
