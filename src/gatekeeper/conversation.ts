/**
 * Conversational turns: greetings, thanks, farewells and questions about the assistant itself.
 * They ask nothing of the code, so the text model (trained on requests) calls them VAGUE; they are
 * recognised here instead, by phrase, in English and the languages people most often greet in.
 * A message is a conversational turn only when nothing is left once its phrases and fillers are
 * taken away: "hi, can you explain this?" is a request with a greeting in front of it.
 */

/** The verdict's intent for a conversational turn: answered briefly, never asked to clarify. */
export const CONVERSATION = 'CONVERSATION' as const;

const GREETINGS = [
  'hi',
  'hii+',
  'hello',
  'hell+o+',
  'hey',
  'heya',
  'hiya',
  'yo',
  'howdy',
  'greetings',
  'good (morning|afternoon|evening|day)',
  'morning',
  'say (hi|hello)',
  'hello again',
  "(i'm|i am) back",
  'how are (you|u)( doing)?( today)?',
  "how's it going",
  "what's up",
  'sup',
  'nice to meet (you|u)',
  // French, German, Spanish, Italian, Portuguese, Dutch, Polish, Turkish
  'bonjour',
  'bonsoir',
  'salut',
  'coucou',
  '(comment )?(ça|ca) va',
  'hallo',
  'guten (morgen|tag|abend)',
  'moin',
  'servus',
  "wie geht('s|s| es dir| es ihnen)",
  'hola',
  'buen(os|as) (días|dias|tardes|noches)',
  '(qué|que) tal',
  'ciao',
  'buongiorno',
  'buonasera',
  'salve',
  'come stai',
  'olá',
  'ola',
  'oi',
  'bom dia',
  'boa (tarde|noite)',
  'tudo bem',
  'hoi',
  'goede(morgen|middag|navond)',
  'hallo daar',
  'cześć',
  'dzień dobry',
  'merhaba',
  // Japanese, Chinese, Russian
  'こんにちは',
  'こんばんは',
  'おはよう(ございます)?',
  '你好',
  '您好',
  '嗨',
  'привет',
  'здравствуйте',
];

const THANKS = [
  'thanks?( (you|u))?( (so|very) much| a (lot|million|bunch|ton))?( for (the|your|all the|all your) help)?',
  'thank (you|u)( (so|very) much| a lot)?( for (the|your|all the|all your) help)?',
  'many thanks',
  'thx',
  'thnx',
  'tnx',
  'ty',
  'tysm',
  'cheers',
  '(that|this|it) (helped|helps)( a lot)?',
  'much appreciated',
  'appreciate it',
  'merci( beaucoup| bien)?',
  'danke( schön| sehr)?',
  'vielen dank',
  '(muchas )?gracias',
  'grazie( mille)?',
  'obrigad[oa]',
  'bedankt',
  'dank (je|u)( wel)?',
  'dziękuję',
  'teşekkürler',
  'ありがとう(ございます)?',
  '谢谢',
  '多谢',
  'спасибо',
];

const FAREWELLS = [
  'good ?bye',
  'bye( bye)?',
  'see (you|u|ya)( (later|soon|tomorrow))?',
  'catch (you|u) later',
  'good night',
  "(that's|that is) (all|it)( for (now|today))?",
  'have a (nice|good|great) (day|evening|weekend)',
  'au revoir',
  'à (plus|bientôt)',
  'tschüss',
  'tschüs',
  'auf wiedersehen',
  'bis (später|bald|morgen)',
  'adiós',
  'adios',
  'hasta (luego|pronto|mañana)',
  'arrivederci',
  'a presto',
  'tchau',
  'até (logo|mais)',
  'tot ziens',
  'doei',
  'さようなら',
  'またね',
  '再见',
  'пока',
  'до свидания',
];

/** Questions about the assistant itself: what it is, what it can do, how to use it. */
const ABOUT_ASSISTANT = [
  'what (else )?can (you|u) do',
  'what (else )?are (you|u) (able to do|good at|for)',
  'what (else )?can (you|u) help( me)? with',
  'how can (you|u) help( me)?',
  'can (you|u) help( me)?( please)?',
  'could (you|u) help( me)?',
  'i need (some )?help',
  'who are (you|u)',
  'what are (you|u)',
  "what's your name",
  'what is your name',
  'tell me about yourself',
  'introduce yourself',
  'are (you|u) (a bot|an ai|a human|human|real|chatgpt|gpt|claude|an llm|a robot)',
  '(which|what) (llm|model|ai)( model)? are (you|u)( running on| using| based on)?',
  '(which|what) (llm|model) (do|does) (you|u|this) use',
  'what do (you|u) know about (my|this) (project|code|repo|repository)',
  'can (you|u) (see|read|access) my (code|files|repo|repository|project)',
  'how do i use (you|u|this( chat)?)',
  'how does (this|the) chat work',
  'how do (you|u) work',
  'what can i ask( (you|u))?',
  '(what|which) commands (do (you|u) have|are there|can i use)',
  '(what|which) (programming )?languages do (you|u) (support|know|speak)',
  // French, German, Spanish, Italian, Portuguese, Dutch, Japanese
  "qu'est-ce que tu (sais|peux) faire",
  'que (sais|peux)-tu faire',
  'qui es-tu',
  'tu es qui',
  "(peux-tu|pouvez-vous|tu peux) m'aider",
  'was kannst du( alles)?( tun| machen)?',
  'wer bist du',
  'kannst du mir helfen',
  '(qué|que) puedes hacer',
  '(quién|quien) eres',
  '(puedes|podrías) ayudarme',
  'cosa (sai|puoi) fare',
  'chi sei',
  'puoi aiutarmi',
  'o que (você|voce|tu) (pode|podes|sabe) fazer',
  'quem é (você|voce)',
  'pode me ajudar',
  'wat kun (je|jij) (doen)?',
  'wie ben (je|jij)',
  'kun je me helpen',
  '何ができますか',
  'あなたは誰(ですか)?',
];

/** Words that may surround the phrases without making a request of them. */
const FILLERS = [
  'please',
  'pls',
  'so',
  'well',
  'oh',
  'ah',
  'um+',
  'ok',
  'okay',
  'and',
  'again',
  'also',
  'just',
  'now',
  'for now',
  'anyway',
  'great',
  'perfect',
  'awesome',
  'nice',
  'cool',
  'excellent',
  'wonderful',
  'amazing',
  "(that's|that is|this is) (great|perfect|awesome|nice|cool|helpful|very helpful)",
  'got it',
  'there',
  'everyone',
  'all',
  'guys',
  'friend',
  'buddy',
  'mate',
  '(gitlab )?duo( chat)?',
  'chat',
  'bot',
  'assistant',
  'again',
  'today',
  'very much',
  'a lot',
  'so much',
  'oui',
  'ja',
  'sí',
  'si',
];

const alternation = (phrases: readonly string[]) => phrases.map((phrase) => `(?:${phrase})`).join('|');

// A phrase ends at a space or the end of the text, so "hi" is not the start of "his" and "yo" not that of "your".
const PHRASE = new RegExp(`^(?:${alternation([...GREETINGS, ...THANKS, ...FAREWELLS, ...ABOUT_ASSISTANT])})(?= |$)`, 'u');
const FILLER = new RegExp(`^(?:${alternation(FILLERS)})(?= |$)`, 'u');

/** Longer than any run of greetings, thanks and questions about the assistant: not read further. */
const MAX_CONVERSATION_CHARS = 200;

/** Lowercase, apostrophes made straight, punctuation and emoji turned into single spaces. */
function normalize(prompt: string): string {
  return prompt
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`´]/g, "'")
    .replace(/[^\p{L}\p{N}'\- ]+/gu, ' ')
    .replace(/(^| )['-]+|['-]+(?= |$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Whether the message is only a greeting, thanks, a farewell or a question about the assistant
 * (or a few of them: "hi, who are you?"), with nothing asked of the code.
 */
export function isConversationalTurn(prompt: string): boolean {
  if (prompt.length > MAX_CONVERSATION_CHARS) return false;
  let rest = normalize(prompt);
  let phrases = 0;
  while (rest.length > 0) {
    const phrase = PHRASE.exec(rest);
    const match = phrase ?? FILLER.exec(rest);
    if (match === null || match[0].length === 0) return false;
    if (phrase !== null) phrases++;
    rest = rest.slice(match[0].length).trimStart();
  }
  return phrases > 0;
}
