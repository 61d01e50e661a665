import { describe, expect, it } from 'vitest';
import { benchmarksMarkdown, HAND_WRITTEN_MARKER, handWrittenPart } from '../../src/bench/docs.js';

const machine = {
  date: '2026-11-23',
  cpu: 'Test CPU',
  cores: 2,
  ramGiB: 1,
  node: 'v20',
  os: 'Linux',
  commit: 'abc1234',
};

describe('docs/benchmarks.md regeneration', () => {
  it('keeps the hand-written record of an earlier page and replaces the generated part', () => {
    const earlier = `# Benchmarks\n\nold table\n\n${HAND_WRITTEN_MARKER}\n\n## Profiling\n\nGET went from 0.20× to 0.40×.\n`;
    const page = benchmarksMarkdown([], machine, 'full', 12, handWrittenPart(earlier));
    expect(page).not.toContain('old table');
    expect(page.endsWith(`${HAND_WRITTEN_MARKER}\n\n## Profiling\n\nGET went from 0.20× to 0.40×.\n`)).toBe(true);
    expect(page.split(HAND_WRITTEN_MARKER)).toHaveLength(2);
  });

  it('starts the hand-written part with the marker when there is no earlier page or no marker', () => {
    expect(handWrittenPart(null)).toBe(`${HAND_WRITTEN_MARKER}\n`);
    expect(handWrittenPart('# Benchmarks\n\nno marker here\n')).toBe(`${HAND_WRITTEN_MARKER}\n`);
  });
});
