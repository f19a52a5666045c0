import type { CancelSignal } from './chat-events';

/**
 * The answers this worker process is generating, by user and client subscription, so that a
 * newer request on the same subscription can cancel the one still streaming.
 */
export class GenerationRegistry {
  private readonly running = new Map<string, { requestId: string; controller: AbortController }>();

  private key(userId: number, clientSubscriptionId: string): string {
    return `${userId}:${clientSubscriptionId}`;
  }

  /** Registers a generation; the returned signal aborts when it is superseded. Call release when done. */
  start(options: { userId: number; clientSubscriptionId: string | null; requestId: string }): { signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    if (!options.clientSubscriptionId) return { signal: controller.signal, release: () => undefined };
    const key = this.key(options.userId, options.clientSubscriptionId);
    this.running.get(key)?.controller.abort();
    const entry = { requestId: options.requestId, controller };
    this.running.set(key, entry);
    return {
      signal: controller.signal,
      release: () => {
        if (this.running.get(key) === entry) this.running.delete(key);
      },
    };
  }

  cancel(signal: CancelSignal): void {
    const key = this.key(signal.userId, signal.clientSubscriptionId);
    const entry = this.running.get(key);
    if (entry && entry.requestId !== signal.supersededBy) {
      entry.controller.abort();
      this.running.delete(key);
    }
  }

  abortAll(): void {
    for (const entry of this.running.values()) entry.controller.abort();
    this.running.clear();
  }
}
