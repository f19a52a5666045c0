import { randomUUID } from 'node:crypto';
import type { SessionState } from './run-generation';
import type { CodeSuggestionUpdateEvent } from './session-update';

/** Timing of continuous suggestions. */
export type SessionTimingOptions = {
  /**
   * Quiet time after an update before a generation starts, so a burst of keystrokes makes one generation with the newest text. Default 150
   * ms.
   */
  debounceMs?: number;
  /** A session with no update for this long expires: its live state is dropped and the service refuses it. Default 10 minutes. */
  idleMs?: number;
};

export const DEFAULT_SESSION_TIMING: Required<SessionTimingOptions> = { debounceMs: 150, idleMs: 10 * 60_000 };

export type SessionRunnerOptions = SessionTimingOptions & {
  /** Runs one generation; must publish nothing once `signal` aborted. */
  generate: (job: { sessionId: string; suggestionId: string; state: SessionState; signal: AbortSignal }) => Promise<void>;
  publish: (update: CodeSuggestionUpdateEvent) => Promise<void>;
  onError: (error: unknown, sessionId: string) => void;
};

type LiveSession = {
  latest: SessionState;
  debounce: NodeJS.Timeout | null;
  idle: NodeJS.Timeout;
  inFlight: { suggestionId: string; revision: number; controller: AbortController } | null;
};

/**
 * The live state of the sessions this process receives updates for: a debounce timer, the
 * generation in flight and an idle timer each. An update supersedes the generation in flight at
 * once (SUPERSEDED is published right after its abort, so nothing of it follows) and restarts the
 * debounce; when the debounce fires, one generation runs for the newest state.
 */
export class SessionRunner {
  private readonly live = new Map<string, LiveSession>();
  private readonly debounceMs: number;
  private readonly idleMs: number;

  constructor(private readonly options: SessionRunnerOptions) {
    this.debounceMs = options.debounceMs ?? DEFAULT_SESSION_TIMING.debounceMs;
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_TIMING.idleMs;
  }

  /** Takes the newest state of a session and schedules its generation. */
  update(sessionId: string, state: SessionState): void {
    let session = this.live.get(sessionId);
    if (session) {
      // Updates may arrive out of order when a client pipelines them: keep the newest.
      if (state.revision < session.latest.revision) return;
      session.latest = state;
      clearTimeout(session.idle);
      session.idle = this.idleTimer(sessionId);
    } else {
      session = { latest: state, debounce: null, idle: this.idleTimer(sessionId), inFlight: null };
      this.live.set(sessionId, session);
    }
    this.supersede(sessionId, session);
    if (session.debounce) clearTimeout(session.debounce);
    session.debounce = setTimeout(() => this.fire(sessionId), this.debounceMs);
  }

  /** Sessions with live state here (for tests and metrics). */
  get size(): number {
    return this.live.size;
  }

  /** Stops every timer and generation (shutdown). */
  close(): void {
    for (const sessionId of [...this.live.keys()]) this.drop(sessionId);
  }

  private fire(sessionId: string): void {
    const session = this.live.get(sessionId);
    if (!session) return;
    session.debounce = null;
    const controller = new AbortController();
    const inFlight = { suggestionId: randomUUID(), revision: session.latest.revision, controller };
    session.inFlight = inFlight;
    this.options
      .generate({ sessionId, suggestionId: inFlight.suggestionId, state: session.latest, signal: controller.signal })
      .catch((error: unknown) => this.options.onError(error, sessionId))
      .finally(() => {
        if (session.inFlight === inFlight) session.inFlight = null;
      });
  }

  private supersede(sessionId: string, session: LiveSession): void {
    const inFlight = session.inFlight;
    if (!inFlight) return;
    session.inFlight = null;
    inFlight.controller.abort();
    this.options
      .publish({
        sessionId,
        suggestionId: inFlight.suggestionId,
        revision: inFlight.revision,
        intent: null,
        generationType: null,
        text: '',
        status: 'SUPERSEDED',
      })
      .catch((error: unknown) => this.options.onError(error, sessionId));
  }

  private idleTimer(sessionId: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.drop(sessionId), this.idleMs);
    timer.unref();
    return timer;
  }

  private drop(sessionId: string): void {
    const session = this.live.get(sessionId);
    if (!session) return;
    this.live.delete(sessionId);
    if (session.debounce) clearTimeout(session.debounce);
    clearTimeout(session.idle);
    session.inFlight?.controller.abort();
  }
}
