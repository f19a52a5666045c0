import { IntentThread } from '../../src/suggestions/intent-thread';

// Kotlin's grammar parses a run of `<a,b>` in quadratic time (see intent-thread.e2e.test.ts).
const RUNAWAY_KOTLIN = `fun f() { F${'<a,b>'.repeat(12_000)}() }`;
const GO_COMMENT = { fileName: 'main.go', contentAboveCursor: 'package main\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n// print the sum\n' };

describe("IntentThread's cooldown after a runaway detection", () => {
  const thread = new IntentThread({ timeoutMs: 300, cooldownMs: 1_500 });
  afterAll(() => thread.close());

  it("answers that user's detections as completions until the cooldown ends, and no one else's", async () => {
    expect(await thread.detect(GO_COMMENT, 7)).toMatchObject({ intent: 'generation', generationType: 'comment' });
    expect(await thread.detect({ fileName: 'Main.kt', contentAboveCursor: RUNAWAY_KOTLIN }, 7)).toMatchObject({ intent: 'completion' });
    const cooling = performance.now();
    expect(await thread.detect(GO_COMMENT, 7)).toMatchObject({ intent: 'completion', generationType: null, language: 'go' });
    expect(await thread.detect(GO_COMMENT, 8)).toMatchObject({ intent: 'generation', generationType: 'comment' });
    // Without a user there is no cooldown to keep.
    expect(await thread.detect(GO_COMMENT)).toMatchObject({ intent: 'generation' });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_600 - (performance.now() - cooling))));
    expect(await thread.detect(GO_COMMENT, 7)).toMatchObject({ intent: 'generation', generationType: 'comment' });
  });
});
