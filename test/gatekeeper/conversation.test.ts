import { NO_CONTEXT, type GatekeeperContext, type ThreadTurn } from '../../src/gatekeeper/context';
import { isConversationalTurn } from '../../src/gatekeeper/conversation';
import { readsAsEnglish } from '../../src/gatekeeper/language';
import { loadGatekeeper } from '../../src/gatekeeper/load-gatekeeper';
import { isContentless } from '../../src/gatekeeper/read-conversation';
import { evaluateConversationTurns, readConversationTurns } from '../../src/gatekeeper/training/conversation-turns';

const gatekeeper = loadGatekeeper({ cacheSize: 0 });

const exchange = (question: string, answer: string): ThreadTurn[] => [
  { role: 'user', content: question },
  { role: 'assistant', content: answer },
];
const inThread = (...turns: ThreadTurn[][]): GatekeeperContext => ({ ...NO_CONTEXT, thread: turns.flat() });
const MONAD = exchange('What is a monad?', 'A monad wraps a value and chains computations with bind.');
const REVERSE = exchange('Write a function that reverses a string in Python', '```python\ndef reverse(s):\n    return s[::-1]\n```');
const GREETED = exchange('hi', 'Hello! How can I help?');

describe('conversational turns', () => {
  it.each([
    'hi',
    'Hello there!',
    'Say hello',
    'thanks!',
    'Thank you so much for your help',
    'ok thanks',
    'goodbye',
    'Bye, thanks for the help',
    'what can you do?',
    'who are you?',
    'Hi Duo, who are you?',
    "Bonjour, peux-tu m'aider ?",
    '¡Hola! ¿Qué tal?',
    'Danke schön',
    'こんにちは',
    'Спасибо!',
  ])('%j is a conversational turn, CLEAR as CONVERSATION', (prompt) => {
    expect(isConversationalTurn(prompt)).toBe(true);
    expect(gatekeeper.classify(prompt)).toMatchObject({ status: 'CLEAR', intent: 'CONVERSATION', intents: [{ intent: 'CONVERSATION' }] });
  });

  it.each([
    'hi, can you explain this function?',
    'thanks, now write tests for it',
    'how does this work',
    'can you help me with this regex',
    'history of the project',
    'your code is wrong',
    'ok',
    'hmm',
    'help',
    'great',
    'x'.repeat(300),
  ])('%j is not', (prompt) => {
    expect(isConversationalTurn(prompt)).toBe(false);
  });
});

describe('the language rule', () => {
  it.each([
    ['Peux-tu expliquer ce que fait cette fonction ?', false],
    ['Wo wird die Datenbankverbindung konfiguriert?', false],
    ['Spiegami questo codice', false],
    ['この関数を説明してください', false],
    ['Объясни, что делает этот код', false],
    ['fix it', true],
    ['hmm', true],
    ['um still broken', true],
    ['why does sin(x) return NaN per request under the MIT build', true],
    ['pourquoi `parseUrl()` fails on src/utils/url.ts', true],
  ])('%j reads as English: %s', (prompt, english) => {
    expect(readsAsEnglish(prompt)).toBe(english);
  });

  it('sends a prompt it cannot read to the model rather than calling it vague', () => {
    expect(gatekeeper.classify('Spiegami questo codice').status).toBe('CLEAR');
    expect(gatekeeper.classify('この関数を説明してください')).toMatchObject({ status: 'CLEAR', intent: null, intents: [] });
  });
});

describe('follow-ups in a thread', () => {
  it.each([
    ['Why?', MONAD, 'GENERAL_QUESTION'],
    ['give an example', MONAD, 'GENERAL_QUESTION'],
    ["that's wrong, check again", REVERSE, 'GENERATE_CODE'],
    ['and in Go?', REVERSE, 'GENERATE_CODE'],
    ['Pourquoi ?', MONAD, 'GENERAL_QUESTION'],
    ['write tests for it', REVERSE, 'WRITE_TESTS'],
  ])('%j after its exchange is CLEAR (%s)', (prompt, before, intent) => {
    expect(gatekeeper.classify(prompt, inThread(before))).toMatchObject({ status: 'CLEAR', intent });
  });

  it('keeps what a chain of follow-ups continues', () => {
    const chain = inThread(MONAD, exchange('Why?', 'Because bind chains them.'), exchange('give an example', 'Promise.then.'));
    expect(gatekeeper.classify('and another one?', chain)).toMatchObject({ status: 'CLEAR', intent: 'GENERAL_QUESTION' });
  });

  it.each(['hmm', '??', 'ok', '...'])('still asks about %j, whatever came before', (prompt) => {
    expect(isContentless(prompt)).toBe(true);
    expect(gatekeeper.classify(prompt, inThread(MONAD)).status).toBe('NEEDS_CLARIFICATION');
  });

  it('still asks about "fix it" alone, and after an exchange that holds no request', () => {
    expect(gatekeeper.classify('fix it').status).toBe('NEEDS_CLARIFICATION');
    expect(gatekeeper.classify('fix it', inThread(GREETED)).status).toBe('NEEDS_CLARIFICATION');
    expect(gatekeeper.classify('fix it', inThread(MONAD, GREETED)).status).toBe('NEEDS_CLARIFICATION');
  });

  it('reads a new request clear on its own as itself, not as the request before it', () => {
    expect(gatekeeper.classify('Explain what this function does', inThread(REVERSE))).toMatchObject({
      status: 'CLEAR',
      intent: 'EXPLAIN_CODE',
    });
  });

  it('reads a follow-up after a request longer than the model reads', () => {
    const paste = `Why does this throw a TypeError?\n\`\`\`js\n${'const value = items.map((item) => item.id);\n'.repeat(800)}\`\`\``;
    expect(paste.length).toBeGreaterThan(30_000);
    const thread = inThread(exchange(paste, 'items is undefined when the request has no body.'));
    expect(gatekeeper.classify('now write unit tests for it', thread)).toMatchObject({ status: 'CLEAR', intent: 'WRITE_TESTS' });
  });

  it('caches a verdict per thread: the same words after another exchange are judged again', () => {
    const cached = loadGatekeeper();
    expect(cached.classify('Why?').status).toBe('NEEDS_CLARIFICATION');
    expect(cached.classify('Why?', inThread(MONAD)).status).toBe('CLEAR');
    expect(cached.classify('Why?', inThread(GREETED)).status).toBe('NEEDS_CLARIFICATION');
    expect(cached.classify('why?', inThread(MONAD)).status).toBe('CLEAR');
  });
});

describe('the hand-written conversational turns', () => {
  it('hold at least 150 turns in several languages, and none of the answerable ones is asked to clarify', () => {
    const turns = readConversationTurns();
    expect(turns.length).toBeGreaterThanOrEqual(150);
    expect(new Set(turns.map((turn) => turn.language)).size).toBeGreaterThanOrEqual(5);
    const { all } = evaluateConversationTurns((prompt, context) => gatekeeper.classify(prompt, context), turns);
    expect(all.askedToClarify).toBe(0);
    expect(all.vagueAsked).toBe(all.vague);
  });
});
