import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/integrations.md shows the recipe files the framework tests run, unchanged. */

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('docs/integrations.md', () => {
  it('quotes each recipe file whole, in a ts block', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/integrations.md'), 'utf8');
    const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    for (const name of ['ai-sdk', 'langchain', 'openai-agents']) {
      const source = await readFile(path.join(import.meta.dirname, 'recipes', `${name}.ts`), 'utf8');
      expect(blocks, name).toContain(source);
    }
  });
});
