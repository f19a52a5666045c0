/** Where progress goes: a terminal gets a bar redrawn in place, anything else plain lines. */
export type ProgressStream = {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
};

export type ProgressBarOptions = {
  stream: ProgressStream;
  /** What is counted, e.g. "files". */
  unit: string;
  /** Redraw a terminal bar at most this often. Default 100 ms. */
  redrawMs?: number;
  /** Without a terminal, print a line at most this often (and always at 0 and at the end). Default 5 s. */
  lineIntervalMs?: number;
  /** For tests. Default performance.now. */
  now?: () => number;
};

export type ProgressUpdate = {
  /** Shown first, e.g. "full". */
  label?: string;
  done: number;
  total: number;
  /** Shown after the counts, e.g. "5,321 chunks". */
  detail?: string;
};

const BAR_WIDTH = 24;
const number = new Intl.NumberFormat('en-US');

/** "42 s", "3 min 05 s", "1 h 02 min": precise enough for an estimate. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

export const formatCount = (value: number) => number.format(value);

/**
 * A progress bar for one counted task: `[██████░░░░] 1,200/3,400 files  5,321 chunks  412 files/s  ~5 s left`.
 *
 * The rate is the average since the first update: work here comes in uneven batches, so a
 * windowed rate would jump about more than it would gain in freshness. Before any work is done
 * there is no rate and no estimate. On a terminal the line is redrawn in place (and cut to the
 * terminal's width, so it never wraps); elsewhere (CI logs, pipes) it prints whole lines now
 * and then, which read well in a log file.
 */
export class ProgressBar {
  private readonly stream: ProgressStream;
  private readonly unit: string;
  private readonly redrawMs: number;
  private readonly lineIntervalMs: number;
  private readonly now: () => number;
  private startedAt: number | null = null;
  private lastDrawAt = -Infinity;
  private lastUpdate: ProgressUpdate | null = null;
  private lastDrawnKey = '';
  private lineShown = false;
  private statusText: string | null = null;

  constructor(options: ProgressBarOptions) {
    this.stream = options.stream;
    this.unit = options.unit;
    this.redrawMs = options.redrawMs ?? 100;
    this.lineIntervalMs = options.lineIntervalMs ?? 5000;
    this.now = options.now ?? (() => performance.now());
  }

  get isTerminal(): boolean {
    return this.stream.isTTY === true;
  }

  /** A phase without counts yet ("planning"): on a terminal it holds the bar's line, elsewhere it prints once. */
  status(text: string): void {
    if (this.statusText === text) return;
    this.statusText = text;
    if (this.isTerminal) this.draw(text);
    else this.stream.write(`${text}\n`);
  }

  update(update: ProgressUpdate): void {
    const now = this.now();
    this.startedAt ??= now;
    const first = this.lastUpdate === null;
    const finished = update.done >= update.total;
    const key = JSON.stringify([update.label, update.done, update.total, update.detail]);
    const showingStatus = this.statusText !== null;
    this.lastUpdate = { ...update };
    this.statusText = null;
    // The same counts again (a last "done" report after the final batch) add nothing to a log.
    if (key === this.lastDrawnKey && !(this.isTerminal && showingStatus)) return;
    const interval = this.isTerminal ? this.redrawMs : this.lineIntervalMs;
    if (!(finished || first || now - this.lastDrawAt >= interval)) return;
    this.lastDrawAt = now;
    this.lastDrawnKey = key;
    if (this.isTerminal) this.draw(this.render(update, now));
    else this.stream.write(`${this.renderPlain(update, now)}\n`);
  }

  /** Removes the bar's line from a terminal, so what is printed next starts on a clean line. */
  clear(): void {
    if (this.isTerminal && this.lineShown) this.stream.write('\r\x1b[2K');
    this.lineShown = false;
  }

  /** Items per second since the first update, or null before there is anything to divide. */
  rate(now = this.now()): number | null {
    if (this.startedAt === null || !this.lastUpdate) return null;
    const seconds = (now - this.startedAt) / 1000;
    return this.lastUpdate.done > 0 && seconds > 0 ? this.lastUpdate.done / seconds : null;
  }

  private estimate(update: ProgressUpdate, now: number): string | null {
    if (update.done >= update.total) return null;
    const rate = this.rate(now);
    // At least a second: "~0 s left" reads as if it were finished.
    return rate ? `~${formatDuration(Math.max(1000, ((update.total - update.done) / rate) * 1000))} left` : null;
  }

  private parts(update: ProgressUpdate, now: number): string[] {
    const rate = this.rate(now);
    return [
      `${formatCount(update.done)}/${formatCount(update.total)} ${this.unit}`,
      update.detail ?? '',
      rate === null ? '' : `${formatCount(Math.round(rate))} ${this.unit}/s`,
      this.estimate(update, now) ?? '',
    ].filter(Boolean);
  }

  private render(update: ProgressUpdate, now: number): string {
    const ratio = update.total > 0 ? Math.min(1, update.done / update.total) : 1;
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
    return [update.label ?? '', bar, ...this.parts(update, now)].filter(Boolean).join('  ');
  }

  private renderPlain(update: ProgressUpdate, now: number): string {
    const percent = update.total > 0 ? Math.floor((Math.min(update.done, update.total) / update.total) * 100) : 100;
    return `${update.label ? `${update.label}: ` : ''}${percent}%, ${this.parts(update, now).join(', ')}`;
  }

  private draw(line: string): void {
    // One column short of the width: writing into the last column makes some terminals wrap.
    const width = Math.max(20, (this.stream.columns || 80) - 1);
    const text = [...line].length > width ? `${[...line].slice(0, width - 1).join('')}…` : line;
    this.stream.write(`\r\x1b[2K${text}`);
    this.lineShown = true;
  }
}
