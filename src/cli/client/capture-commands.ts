import type { Command } from 'commander';
import { registerCaptureCommands as registerClaudeCode } from './capture.js';
import { registerCodexCapture } from './capture-codex.js';
import { registerGeminiCapture } from './capture-gemini.js';

/** `cairn capture <host>`: Claude Code's (capture.ts), then each other host's module on the same `capture`. */
export function registerCaptureCommands(program: Command): void {
  registerClaudeCode(program);
  const capture = program.commands.find((c) => c.name() === 'capture');
  if (!capture) throw new Error('the capture command was not registered');
  registerCodexCapture(capture);
  registerGeminiCapture(capture);
}
