import type { ToolResult } from '../tools/semantic-search.tool';
import { codeBlock, inlineCode, markdownText } from './markdown-text';

/**
 * The answer to a chat question with repository or directory context when no language model is
 * configured: what code search found, short — the files with line ranges and the best snippets —
 * so the embedded default is useful on its own. The sources go into extras.sources as for a
 * model's answer (the caller does that). Null when search found nothing to show.
 */

/** Files listed, snippets shown, and lines shown per snippet. */
const MAX_FILES = 5;
const MAX_SNIPPETS = 3;
const MAX_SNIPPET_LINES = 12;

const FENCE_LANGUAGES: Record<string, string> = {
  typescript: 'typescript',
  javascript: 'javascript',
  python: 'python',
  ruby: 'ruby',
  go: 'go',
  java: 'java',
  rust: 'rust',
  c: 'c',
  cpp: 'cpp',
  csharp: 'csharp',
  php: 'php',
  kotlin: 'kotlin',
};

function excerpt(content: string): string {
  const lines = content.replace(/\s+$/, '').split('\n');
  return lines.length <= MAX_SNIPPET_LINES ? lines.join('\n') : [...lines.slice(0, MAX_SNIPPET_LINES), '…'].join('\n');
}

const lineRange = (start: number, end: number) => (start === end ? `line ${start}` : `lines ${start}–${end}`);

export function answerFromSearch(results: readonly ToolResult[], options: { modelHint: string }): string | null {
  const searched = results.filter((result) => result.status === 'ok' && result.found?.length);
  if (!searched.length) return null;
  const parts: string[] = ['No language model is configured, so this is what code search found for your question (best match first):'];
  for (const result of searched) {
    const found = result.found!;
    const files: Array<{ path: string; ranges: string[] }> = [];
    for (const hit of found) {
      let file = files.find((entry) => entry.path === hit.path);
      if (!file) {
        if (files.length >= MAX_FILES) continue;
        file = { path: hit.path, ranges: [] };
        files.push(file);
      }
      file.ranges.push(lineRange(hit.startLine, hit.endLine));
    }
    parts.push(
      [
        `**${markdownText(result.where ?? 'Repository')}**`,
        ...files.map((file, index) => `${index + 1}. ${inlineCode(file.path)} (${file.ranges.join(', ')})`),
      ].join('\n'),
    );
    for (const hit of found.slice(0, MAX_SNIPPETS)) {
      const symbol = hit.symbol ? ` — ${inlineCode(hit.symbol)}` : '';
      parts.push(
        `${inlineCode(hit.path)}, ${lineRange(hit.startLine, hit.endLine)}${symbol}:\n` +
          codeBlock(excerpt(hit.content), FENCE_LANGUAGES[hit.language ?? ''] ?? null),
      );
    }
  }
  parts.push(options.modelHint);
  return parts.join('\n\n');
}
