/** What a dependency's fail-fast watch reports, and how often it asks again. */
export type AnswerWatchEvents = {
  /** How long after an unanswered probe the next one asks whether the dependency answers again. Default 500. */
  probeIntervalMs?: number;
  /** Called when the dependency stops answering (false, with what went unanswered) and when it answers again (true). */
  onChange?(answering: boolean, cause?: unknown): void;
  /** Called for each command or statement refused at once while the dependency is not answering. */
  onRefused?(): void;
};

export type AnswerWatchOptions = AnswerWatchEvents & {
  /** Asks the dependency once (Redis: PING; PostgreSQL: SELECT 1 on a connection of its own): true if it answered. */
  ask(): Promise<boolean>;
};

/**
 * Whether a dependency answers the request path, for its fail-fast connection (FailFastRedis) or pool
 * (request-timeout.ts): from something that went unanswered, the owner refuses what it would send, until a probe
 * (at once, then every `probeIntervalMs`) or the owner itself (`answeredAgain`) sees the dependency answer.
 */
export class AnswerWatch {
  private notAnswering = false;
  private probe: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly options: AnswerWatchOptions) {}

  get answering(): boolean {
    return !this.notAnswering;
  }

  refused(): void {
    this.options.onRefused?.();
  }

  stoppedAnswering(cause?: unknown): void {
    if (this.notAnswering || this.stopped) return;
    this.notAnswering = true;
    this.options.onChange?.(false, cause);
    // At once: something late only because the dependency was busy a moment is followed by a probe that answers.
    this.schedule(0);
  }

  answeredAgain(): void {
    if (!this.notAnswering) return;
    this.notAnswering = false;
    this.clearProbe();
    this.options.onChange?.(true);
  }

  /** For good (the connection or pool is closed): no more probes, no more changes. */
  stop(): void {
    this.stopped = true;
    this.clearProbe();
  }

  private schedule(delayMs: number): void {
    this.probe = setTimeout(() => {
      this.probe = null;
      void this.options.ask().then((answered) => {
        if (this.stopped || !this.notAnswering) return;
        if (answered) this.answeredAgain();
        else if (this.probe === null) this.schedule(this.options.probeIntervalMs ?? 500);
      });
    }, delayMs);
    this.probe.unref();
  }

  private clearProbe(): void {
    if (this.probe) clearTimeout(this.probe);
    this.probe = null;
  }
}
