/** A block of a prompt that is code or tool output rather than the developer's words. */
export type CodeRegion = {
  /** `trace` for stack traces and compiler or runtime errors, `code` for anything else. */
  kind: 'code' | 'trace';
  /** Whether it came from a ``` or ~~~ fence (pasted on purpose) or was recognised line by line. */
  fenced: boolean;
  start: number;
  end: number;
};

// Each pattern recognises one runtime's frame or error header. They decide only what counts as
// prose, never an intent: the model learns what a trace in a prompt means.
const TRACE_LINE_PATTERNS: RegExp[] = [
  // JavaScript, Java, C#: two patterns for what was `\S.*[(\s]\S+:\d+...`, where \S+ rescanned a run
  // of '(' from each of them (a 20,000-character line took 0.2 s). The location follows the last
  // space, or the first '(' when no space comes before it.
  /^\s*at\s+\S.*\s\S+:\d+(:\d+)?\)?\s*$/,
  /^\s*at\s+\S[^\s(]*\(\S+:\d+(:\d+)?\)?\s*$/,
  /^\s*at\s+\S+:\d+:\d+\s*$/,
  /^\s*File ".+", line \d+/, // Python
  /^\s*Traceback \(most recent call last\)/,
  /^\s*(Caused by|Exception in thread)\b/,
  /^\s*\.\.\. \d+ more\s*$/,
  /^\s*(Uncaught\s+)?([\w$]+\.)*([A-Z][\w$]*)?(Error|Exception|Panic|Fault)\b:/,
  /^\s*(panic|fatal error|error(\[E\d+\])?|warning|Segmentation fault)[:\s]/, // Go, Rust, C
  /^\s*goroutine \d+ \[/,
  /^\s*\S+\.(go|rs|c|cc|cpp|h|py|rb|js|ts|java|kt|cs|php|ex|exs):\d+(:\d+)?/,
  /^\s*from \S+:\d+:in /, // Ruby
  /^\s*-->\s+\S+:\d+:\d+/,
  /^\s*#\d+\s+0x[0-9a-fA-F]+/,
  /^\s*\d+:\s+0x[0-9a-fA-F]+/,
];

const CODE_START = new RegExp(
  String.raw`^\s*(def|class|function|const|let|var|import|from|export|return|public|private|protected|static|func|package|` +
    String.raw`fn|pub|impl|struct|interface|enum|#include|using|namespace|async|await|elif|else|try|catch|finally|SELECT|` +
    String.raw`INSERT|UPDATE|DELETE|CREATE)\b`,
);
// `\](?:\s*,)?\s*$` for `\]\s*,?\s*$`: the two \s* around an optional comma could share spaces in
// every way, quadratic in the spaces after a ']' (0.13 s for 20,000).
const CODE_END = /([{};]|\)\s*:|=>|\](?:\s*,)?|\}(?:\s*,)?)\s*$/;
const CODE_SYMBOLS = /[{}()[\];=<>]/g;
const OPERATORS = /[{}()[\];=<>+\-*/%.:,]/;
const CALL_LINE = /^[\w$.]+\(.*\)[;,]?$/;
const FENCE = /(^|\n)[ \t]*(```|~~~)[^\n]*(\n[\s\S]*?)?(\n[ \t]*\2[ \t]*(?=\n|$)|$)/g;

// One alternation is tested in a single pass, several times faster than fourteen tests per line.
const TRACE_LINE = new RegExp(TRACE_LINE_PATTERNS.map((pattern) => `(?:${pattern.source})`).join('|'));

export function isTraceLine(line: string): boolean {
  return TRACE_LINE.test(line);
}

/**
 * A line of code is told apart from prose by its shape: a keyword start with symbols, a
 * statement ending, or a high density of brackets and operators. Indentation is ignored on
 * purpose, so prompts that differ only in whitespace share one cache entry and one answer.
 */
export function isCodeLine(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed.length === 0) return false;
  const symbols = trimmed.match(CODE_SYMBOLS)?.length ?? 0;
  if (CODE_START.test(trimmed) && OPERATORS.test(trimmed)) return true;
  if (CALL_LINE.test(trimmed)) return true;
  if (CODE_END.test(trimmed) && (symbols >= 2 || trimmed.length <= 2)) return true;
  return symbols >= 3 && symbols / trimmed.length > 0.08;
}

/**
 * Where code starts in a line that opens with prose and a colon ("why does this throw: const
 * total = items.reduce(...)"), or -1.
 */
function codeAfterProse(line: string): number {
  const colon = line.indexOf(': ');
  if (colon <= 0) return -1;
  const head = line.slice(0, colon);
  if (/[{}()[\];=<>]/.test(head) || head.trim().split(/\s+/).length < 2) return -1;
  return isCodeLine(line.slice(colon + 2)) ? colon + 2 : -1;
}

function classifyBlock(text: string): CodeRegion['kind'] {
  return text.split('\n').some(isTraceLine) ? 'trace' : 'code';
}

/**
 * Finds fenced blocks first (they may hold anything), then runs of code-like or trace-like lines
 * in the rest. Regions are sorted and never overlap.
 */
export function findCodeRegions(text: string): CodeRegion[] {
  const regions: CodeRegion[] = [];
  const fenced: Array<[number, number]> = [];
  for (const match of text.matchAll(FENCE)) {
    const start = match.index + match[1].length;
    const end = match.index + match[0].length;
    fenced.push([start, end]);
    regions.push({ kind: classifyBlock(text.slice(start, end)), fenced: true, start, end });
  }
  let offset = 0;
  let run: CodeRegion | null = null;
  let fenceIndex = 0;
  for (const line of text.split('\n')) {
    const lineStart = offset;
    const lineEnd = offset + line.length;
    offset = lineEnd + 1;
    while (fenceIndex < fenced.length && fenced[fenceIndex][1] < lineStart) fenceIndex++;
    const insideFence = fenceIndex < fenced.length && fenced[fenceIndex][0] <= lineEnd && lineStart <= fenced[fenceIndex][1];
    const trace = !insideFence && isTraceLine(line);
    const codeStart = insideFence || trace ? -1 : codeAfterProse(line);
    if (codeStart >= 0) {
      if (run !== null) regions.push(run);
      run = null;
      regions.push({ kind: 'code', fenced: false, start: lineStart + codeStart, end: lineEnd });
      continue;
    }
    const kind = insideFence ? null : trace ? 'trace' : isCodeLine(line) ? 'code' : null;
    if (kind !== null) {
      if (run === null) run = { kind, fenced: false, start: lineStart, end: lineEnd };
      else {
        run.end = lineEnd;
        if (kind === 'trace') run.kind = 'trace';
      }
    } else if (run !== null && (insideFence || line.trim().length > 0)) {
      regions.push(run);
      run = null;
    }
  }
  if (run !== null) regions.push(run);
  return regions.sort((left, right) => left.start - right.start);
}
