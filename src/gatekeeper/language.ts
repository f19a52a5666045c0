import type { CodeRegion } from './find-code-regions';

/**
 * Whether the gatekeeper can read a prompt's prose as English. The text model learnt English
 * requests only, so a prompt in another language that it calls vague or doubts is not vague: it
 * is unread. Function words tell languages apart well even in a short message; letters of
 * another script (Cyrillic, CJK, Arabic, ...) settle it on their own. Names, code and paths are
 * left out. A prompt with no telling word either way ("hmm", "fix it") counts as English.
 */

// Common English words that no listed language shares (so "die", "in", "a", "come" are not here).
const ENGLISH = new Set(
  (
    'the this that these those it its is are was were be been am do does did doing done have has had what which who whom whose ' +
    'why how when where there here can could should would will shall may might must not no yes of to for from with without ' +
    'about into onto on at by and or but if then than so because my your our their his her me you we they i he she them us ' +
    'please thanks thank hi hello hey what’s it’s i’m don’t doesn’t isn’t can’t won’t ' +
    "what's it's i'm don't doesn't isn't can't won't let's there's that's " +
    'write explain fix make add show give find get tell use using need want help refactor test tests code function file ' +
    'again example more less other another same all any some every each just only also too very why?'
  ).split(/\s+/),
);

// Function words of French, German, Spanish, Italian, Portuguese, Dutch, Polish and Turkish that are not English words.
const OTHER = new Set(
  // French
  (
    'le la les un une des du au aux est sont et ou mais pour avec sans dans sur ce cette ces cet qui que quoi quel quelle ' +
    'pourquoi comment où je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses peux peut pouvez fais fait faire ' +
    "écris écrire explique expliquer corrige pas ne n'est c'est qu'est-ce j'ai moi toi merci bonjour salut aussi très " +
    // German
    'der die das den dem des ein eine einen einem einer ist sind und oder aber für mit ohne nicht ich du er sie wir ihr ' +
    'wie was warum wo wer kannst können kann bitte schreib schreibe erkläre erklär mir mich dir dich dieser diese dieses ' +
    'auch noch nur sehr und danke hallo gibt zwischen unterschied beispiel ' +
    // Spanish
    'el los las una unos unas es son y o pero por para con sin en del al que qué cómo como dónde donde cuál cuando ' +
    'porque por qué yo tú él ella nosotros puedes puede escribe explica arregla este esta esto estos estas mi mis tu tus ' +
    'su sus muy también gracias hola dame código función ' +
    // Italian
    'il lo gli uno della delle dei degli è sono e ma per con senza nel nella che chi cosa perché come dove quale ' +
    'io tu lui lei noi voi puoi può scrivi spiega correggi questo questa questi queste mio mia tuo tua anche molto grazie ' +
    'spiegami ' +
    // Portuguese
    'os um uma umas uns é são e ou mas para com sem no na nos nas do da dos das que quê como onde qual porque ' +
    'eu tu ele ela nós vocês você pode podes escreva escreve explique corrija este esta isto esse essa meu minha ' +
    'também muito obrigado obrigada olá faço fazer erro ' +
    // Dutch
    'de het een is zijn en of maar voor met zonder niet ik jij je hij zij wij jullie wat waarom hoe waar wie ' +
    'kun kan kunt schrijf leg uit dit deze dat mijn jouw ook heel bedankt hallo functie lijst sorteert ' +
    // Polish, Turkish
    'jest są i lub ale dla bez nie ja ty on ona co dlaczego jak gdzie napisz wyjaśnij popraw ten ta to tej ' +
    'funkcji testy bir ve veya ama için ile bu şu ne neden nasıl nerede'
  ).split(/\s+/),
);

// Words in both lists (a shared spelling) tell nothing; nor do these, common in English prompts as
// names, units or interjections (MIT, sin(x), "per request", OS, EU, "um", "yo").
const AMBIGUOUS = 'um o e es sin per chi su mi mit er dir yo uno os sem na nas dos eu leg heel ale ten'.split(' ');
for (const word of [...OTHER]) if (ENGLISH.has(word) || AMBIGUOUS.includes(word)) OTHER.delete(word);

// Letters of Latin script, and letters of any other.
const LATIN = /\p{Script=Latin}/gu;
const LETTER = /\p{L}/gu;
const WORD = /[\p{L}'’-]+/gu;

/** The prompt without its code regions, names (camelCase, snake_case, dotted), paths and inline code. */
function proseOf(prompt: string, regions: readonly CodeRegion[]): string {
  let prose = '';
  let from = 0;
  for (const region of regions) {
    prose += `${prompt.slice(from, region.start)} `;
    from = region.end;
  }
  prose += prompt.slice(from);
  return prose.replace(/`[^`\n]*`/g, ' ').replace(/\S*\w[_./\\]\w\S*|\S*[a-z][A-Z]\S*/g, ' ');
}

/** Whether the prose reads as English, or at least not as another language. */
export function readsAsEnglish(prompt: string, regions: readonly CodeRegion[] = []): boolean {
  const prose = proseOf(prompt, regions);
  const letters = prose.match(LETTER)?.length ?? 0;
  if (letters === 0) return true;
  const latin = prose.match(LATIN)?.length ?? 0;
  if (latin * 2 < letters) return false;
  let english = 0;
  let other = 0;
  for (const word of prose.toLowerCase().match(WORD) ?? []) {
    if (ENGLISH.has(word)) english++;
    else if (OTHER.has(word) || /[àâäçéèêëîïôöûùüÿñßãõąćęłńóśźż]/.test(word)) other++;
  }
  return other <= english;
}
