import { parentPort } from 'node:worker_threads';
import { type RenderJob, renderDocument } from './render-job.js';

/**
 * A render worker thread (RenderPool): one job at a time, its document or its failure sent back.
 * It says when it starts a job, so that the pool's time limit counts the render and not the
 * worker's own start (loading the renderers).
 */
parentPort?.on('message', ({ id, job }: { id: number; job: RenderJob }) => {
  parentPort?.postMessage({ id, started: true });
  try {
    parentPort?.postMessage({ id, doc: renderDocument(job) });
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
