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
  /** The debounce ended while another update of the session was being taken in: its outcome decides. */
  held: boolean;
  idle: NodeJS.Timeout;
  inFlight: { suggestionId: string; revision: number; controller: AbortController } | null;
};

/**
 * The live state of the sessions this process receives updates for: a debounce timer, the
 * generation in flight and an idle timer each. An update supersedes the generation in flight at
 * once (SUPERSEDED is published right after its abort, so nothing of it follows) and restarts the
 * debounce; when the debounce fires, one generation runs for the newest state.
 *
 * The debounce counts from the update's arrival, not from the end of its own processing
 * (authentication, the database write): that work happens during the quiet time instead of before
 * it. So that a burst still makes one generation when an update takes long to be taken in, a
 * debounce that ends while another update of its session is on its way (see `arriving`) waits for
 * that update: taken, it restarts the debounce; refused, the generation runs then.
 */
export class SessionRunner {
  private readonly live = new Map<string, LiveSession>();
  /** Updates being taken in (arrived, not yet taken or refused), by session. */
  private readonly pending = new Map<string, number>();
  private readonly debounceMs: number;
  private readonly idleMs: number;

  constructor(private readonly options: SessionRunnerOptions) {
    this.debounceMs = options.debounceMs ?? DEFAULT_SESSION_TIMING.debounceMs;
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_TIMING.idleMs;
  }

  /**
   * An update of the session arrived and is being checked and stored: until the returned function
   * is called (after `update`, or when the update was refused), the session's debounce does not end.
   */
  arriving(sessionId: string): () => void {
    this.pending.set(sessionId, (this.pending.get(sessionId) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = this.pending.get(sessionId)! - 1;
      if (left > 0) return void this.pending.set(sessionId, left);
      this.pending.delete(sessionId);
      const session = this.live.get(sessionId);
      if (session?.held) this.fire(sessionId);
    };
  }

  /**
   * Takes the newest state of a session and schedules its generation, `debounceMs` after
   * `arrivedAt` (performance.now() when the update arrived; default now).
   */
  update(sessionId: string, state: SessionState, arrivedAt: number = performance.now()): void {
    let session = this.live.get(sessionId);
    if (session) {
      // Updates may arrive out of order when a client pipelines them: keep the newest.
      if (state.revision < session.latest.revision) return;
      session.latest = state;
      clearTimeout(session.idle);
      session.idle = this.idleTimer(sessionId);
    } else {
      session = { latest: state, debounce: null, held: false, idle: this.idleTimer(sessionId), inFlight: null };
      this.live.set(sessionId, session);
    }
    this.supersede(sessionId, session);
    if (session.debounce) clearTimeout(session.debounce);
    session.held = false;
    session.debounce = setTimeout(() => this.fire(sessionId), Math.max(0, arrivedAt + this.debounceMs - performance.now()));
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
    session.held = this.pending.has(sessionId);
    if (session.held) return;
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
        reason: null,
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
