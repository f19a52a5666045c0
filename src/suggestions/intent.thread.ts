// The body of the intent detection thread (intent-thread.ts): detects one file's intent at a time, so a
// parse never holds up the main thread's event loop, and one that runs away can be ended by ending the thread.
import { parentPort } from 'node:worker_threads';
import { initTreeSitter } from '../parsing/runtime';
import { detectIntent, type DetectIntentInput, type IntentDecision } from './detect-intent';

export type IntentTaskMessage = { id: number; input: DetectIntentInput };
export type IntentTaskReply =
  { ready: true } | { id: number; decision: IntentDecision } | { id: number; error: { message: string; stack?: string } };

const port = parentPort;
if (port) {
  port.on('message', (message: IntentTaskMessage) => {
    detectIntent(message.input).then(
      (decision) => port.postMessage({ id: message.id, decision } satisfies IntentTaskReply),
      (error: unknown) => {
        const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
        port.postMessage({ id: message.id, error: failure } satisfies IntentTaskReply);
      },
    );
  });
  // Ready once tree-sitter's runtime is in: a task's time limit counts from then, not from the thread's start.
  void initTreeSitter().then(
    () => port.postMessage({ ready: true } satisfies IntentTaskReply),
    () => port.postMessage({ ready: true } satisfies IntentTaskReply),
  );
}
