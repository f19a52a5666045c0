import type { Intent } from '../../labels';

/**
 * Whole prompts per intent, in many styles (polite, terse, questions, commands). {polite} is an
 * optional lead-in; `{code}` marks templates that read naturally with pasted code after them and
 * `{trace}` those that take a stack trace.
 */
export const INTENT_TEMPLATES: Readonly<Record<Intent, readonly string[]>> = {
  EXPLAIN_CODE: [
    '{polite}explain {target}', 'what does {target} do', 'what does {target} do?{code}', '{polite}walk me through {target}',
    'how does {target} work?', "I don't understand {target}, can you explain it?", '{polite}explain what {target} is doing{code}',
    'can you break down {target} line by line', 'what is the purpose of {target}?', 'why does {target} use {construct}?',
    'explain the logic in {target}', "what's going on in {target}{code}", 'help me understand {target}', 'summarize what {target} does',
    'describe how {target} handles {aspect}', 'what does this line do: {inlineCode}', 'explain this regex: {regex}', 'what does {target} return?',
    'eli5 {target}', "what's the time complexity of {target}?", 'explain {target} in simple terms', 'tell me what {target} does{code}',
    'how does this {lang} code work?{code}', 'what is this code doing?{code}', 'can you explain how {aspect} work in {target}?',
    'I inherited {target} and have no idea what it does', 'why is {construct} needed in {target}?', 'explain this to me{code}',
    'what happens when {target} gets called?', 'go through {target} step by step and explain it',
    'explain how {target} handles {aspect} and {aspect}', 'what does {target} do and why?', 'explain {target} and what it returns', 'how does {target} work and where does the data come from?',
  ],
  GENERATE_CODE: [
    '{polite}write {artifact}', '{polite}create {artifact}', '{polite}generate {artifact} in {lang}', 'I need {artifact}',
    'how do I write {artifact} in {lang}?', 'implement {fn} so that it {behaviour}', '{polite}scaffold {project}', 'give me {lang} code for {task}',
    'add a new endpoint {endpoint} that {behaviour}', 'write the boilerplate for {artifact}', 'can you code {artifact}', 'make {artifact} for me',
    'complete this function so it {behaviour}{code}', 'add a method to {cls} that {behaviour}', 'write a {lang} script that {scriptTask}',
    'gen {artifact}', 'i want {artifact} in {lang}', 'build {artifact}', 'code up {task} in {lang}', 'write {lang} for {task}',
    'show me how to implement {task} in {lang}', 'create a new {cls} class that {behaviour}', 'implement the TODO in this function{code}',
    '{polite}write a function called {fn} that {behaviour}', 'generate the code for {task}', 'need {artifact} asap',
    '{polite}write a function that {behaviour} and {behaviour}', 'implement {fn} so that it {behaviour} and then {behaviour}', 'create {artifact} and make it configurable', 'write {artifact} with types and error handling',
  ],
  FIX_CODE: [
    '{polite}fix {target}{code}', '{target} {bug}, can you fix it?', 'why does {target} throw {error}?', "I'm getting {error} when I call {fn}, how do I fix it?",
    '{bug} in {target}, please fix', "there's a bug in {target}: {bug}", 'debug {target}{code}', '{target} is broken, {bug}', 'help me fix {error}',
    "my {lang} code {bug}, what's wrong?{code}", 'find the bug in {target}{code}', 'why is {target} failing? {bug}',
    'this test is failing with {error}, fix the code', 'getting {error}{trace}', '{trace}how do I fix this?', 'why am I getting this error?{trace}',
    'resolve {error} in {target}', 'the build fails with {compileError}', "what's wrong with {target}?{code}", "{target} doesn't work when {condition}",
    'patch {target} so it {fixGoal}', 'fix {error} in {fn}', '{fn} {bug}', 'fix this error{trace}', 'this crashes{trace}',
    'compile error: {compileError}, how to fix', "can't figure out why {bug}{code}", 'why does this fail?{trace}', "{target} {bug} and I don't know why",
    '{target} {bug} and then crashes, fix it', 'fix {target}, {bug} and {bug}', 'I get {error} and then the app hangs, how do I fix {target}?', 'why does {target} throw {error} and how do I fix it?',
    'fix the bug where {bug}', 'fix the issue where {target} {bug}',
  ],
  REFACTOR_CODE: [
    '{polite}refactor {target}{code}', '{polite}refactor {target} to {refactorGoal}', 'clean up {target}', 'simplify {target}{code}',
    'make {target} more readable', 'rewrite {target} to {refactorGoal}', 'can {target} be written more cleanly?{code}',
    'extract {part} from {target} into a separate function', 'rename the variables in {target} to something clearer', 'reduce the nesting in {target}',
    'convert {target} to {paradigm}', 'remove the duplication between {fn} and {fn2}', 'split {target} into smaller functions',
    'this function is too long, break it up{code}', 'improve the structure of {target}', 'tidy up {target}', 'modernize {target}',
    'make {target} more idiomatic {lang}', 'DRY up {target}', 'make {target} faster without changing what it does', 'restructure {target} so it is easier to test',
    'move {part} out of {target}', 'this is messy, refactor it{code}', 'refactor pls{code}', 'can you make {target} less verbose?',
    'replace the nested ifs in {target} with guard clauses', 'reorganize {file} into smaller modules',
    'refactor {target} to {refactorGoal} and {refactorGoal}', 'clean up {target} and make it easier to read', 'rename things in {target} and then split it into smaller functions', 'simplify {target} and remove the dead code',
  ],
  WRITE_TESTS: [
    '{polite}write tests for {target}', '{polite}write unit tests for {target}{code}', 'add {framework} tests for {target}', 'generate test cases for {target}',
    'tests for {target} pls', 'cover {target} with tests', 'how would I test {target}?', 'write a test that checks {fn} {behaviourCheck}',
    'add edge case tests for {target}', 'create a {framework} spec for {cls}', 'increase test coverage for {target}', 'write integration tests for {endpoint}',
    'mock {dependency} and test {target}', 'unit test {target}{code}', 'give me table-driven tests for {target}', 'write a failing test that reproduces the bug where {bug}',
    'add snapshot tests for {target}', 'property-based tests for {target}', 'tests pls{code}', 'write {framework} tests{code}', 'test {target} with {framework}',
    'I need unit tests for {fn}', 'write specs for {cls}', 'what test cases should {target} have? write them', 'add a regression test for {fn}',
    'write tests for {target} and cover {aspect}', 'add tests for {fn} and {fn2}', 'write {framework} tests for {target} and mock {dependency}', 'write unit tests and integration tests for {target}',
  ],
  CODEBASE_SEARCH: [
    'where is {symbol} defined?', 'where is {symbol} defined in this repo?', 'which files call {fn}?', 'find all usages of {fn}', 'where do we {repoAction}?',
    'is there already a helper for {helper} in this codebase?', 'show me where {symbol} is implemented', 'what calls {fn}?', 'find the file that {fileRole}',
    'which module handles {concern}?', 'how is {concern} implemented in this project?', 'list all the places that use {cls}', 'where are the {things} stored?',
    'grep for {fn}', 'search the repo for {symbol}', 'in which file is {cls} declared?', 'does this project have a helper for {helper}?',
    "where's the entry point of this app?", 'who uses {cls}?', 'find where {envVar} is read', 'where in the codebase do we {repoAction}', 'locate {symbol}',
    'which services depend on {cls}?', 'show me every file that imports {file}', 'where does {fn} get called from?', 'in our repo, where do we {repoAction}?',
    'where is {symbol} defined and which files import it?', 'find {symbol} and list everything that calls it', 'where do we {repoAction} and where do we {repoAction}?', 'which files call {fn} and {fn2}?',
    'list the files that {fileRole}', 'what file {fileRole}?', 'locate the code where we {repoAction}',
  ],
  GENERAL_QUESTION: [
    'what is {concept}?', "what's the difference between {pair}?", 'explain {concept}', 'how does {concept} work?', 'when should I use {tool}?',
    'is {lang} good for {domain}?', 'what are the best practices for {practice}?', 'why is {concept} important?', 'how do I learn {lang}?',
    'what does {acronym} stand for?', 'pros and cons of {tool}', 'can you recommend a {libKind} for {lang}?', 'what is the time complexity of {algo}?',
    'tell me about {concept}', "what's a good way to {generalTask}?", 'difference between {pair}', 'explain {concept} like I am five',
    'is it bad practice to use {tool}?', 'what is {acronym}?', 'should I use {tool} or not for a small app?', 'how does {algo} work?', 'why do people use {tool}?',
    'in general, how do you {generalTask}?', 'eli5 {concept}', 'what are {concept} used for?',
    "what's the difference between {pair} and when should I use each?", 'what is {concept} and why does it matter?', 'how does {concept} work and what are the downsides?', 'compare {tool} and {tool} for a small team',
  ],
};

/**
 * Imperative clauses that join into multi-intent prompts. In second and later position {target}
 * often becomes "it", as people write ("explain this and then write tests for it").
 */
export const CLAUSES: Readonly<Record<Intent, readonly string[]>> = {
  EXPLAIN_CODE: ['explain {target}', 'walk me through {target}', 'tell me what {target} does', 'explain how {target} works', 'explain what {target} returns'],
  GENERATE_CODE: ['write {artifact}', 'create {artifact}', 'generate {artifact}', 'implement {task} in {lang}', 'add a method to {cls} that {behaviour}'],
  FIX_CODE: ['fix the bug where {bug}', 'fix {error} in {target}', 'debug {target}', 'fix {target} so it {fixGoal}', 'figure out why {bug} and fix it'],
  REFACTOR_CODE: ['refactor {target} to {refactorGoal}', 'clean up {target}', 'simplify {target}', 'rename the variables in {target}', 'split {target} into smaller functions'],
  WRITE_TESTS: ['write tests for {target}', 'add unit tests for {target}', 'write {framework} tests for {target}', 'cover {target} with tests', 'add a regression test'],
  CODEBASE_SEARCH: ['find where {symbol} is defined', 'show me which files call {fn}', 'tell me where we {repoAction}', 'find all usages of {fn}', 'find the file that {fileRole}'],
  GENERAL_QUESTION: ['explain what {concept} is', "tell me the difference between {pair}", 'explain how {concept} works in general', 'tell me when to use {tool}'],
};

/** How people join two requests; {a} and {b} are clauses. */
export const MULTI_FRAMES: readonly string[] = [
  '{a} and then {b}', '{a} and {b}', '{a}, then {b}', '{A}. Then {b}.', '{A}. After that, {b}.', '{a}, and also {b}', '{a}; also {b}',
  'first {a}, then {b}', 'can you {a} and {b}?', 'I need you to {a} and also {b}', '{A}.\n{B}.', '1. {a}\n2. {b}', '{a} + {b}', '{a}, plus {b}',
  'please {a}, and once that is done {b}', '{A}. Also, {b}', 'could you {a}? and {b} too', '{a} & {b}',
];

/** A third clause, when there is one. */
export const THIRD_FRAMES: readonly string[] = ['{prompt}, and finally {c}', '{prompt}. Finally, {c}.', '{prompt} and {c}', '{prompt}\n3. {c}'];

/**
 * Prompts with nothing to act on: no request ("help"), no object ("fix it"), no direction
 * ("make it better"), or no words at all ("??").
 */
export const VAGUE_PROMPTS: readonly string[] = [
  'help', 'help me', 'help pls', 'pls help', 'can you help', 'can you help me?', 'I need help', 'fix it', 'fix it pls', 'just fix it', 'do the thing', 'do it',
  'do that', 'make it better', 'make it work', 'make it good', 'improve it', '??', '???', '?', 'hmm', 'idk', 'ok', 'okay so', 'what', 'what?', 'huh', 'again',
  'try again', 'same as before', 'the usual', 'you know what I mean', 'continue', 'go on', 'more', 'and?', 'so?', 'this', 'that', 'it', 'the thing', 'something',
  'stuff', 'anything', 'something is wrong', "it's broken", "it doesn't work", 'not working', "doesn't work", 'still broken', 'still not working', 'broken',
  'error', 'errors', 'it failed', 'why', 'why?', 'why not', 'how', 'how?', 'hello', 'hi', 'hey', 'hi there', 'thanks', 'thank you', 'cool', 'nice', 'yes',
  'no', 'sure', 'please', 'asap', 'urgent', 'quick question', 'I have a question', 'can I ask something', 'one more thing', 'change it', 'update it', 'redo it',
  'undo', 'make it faster', 'clean it', 'sort it out', 'handle it', 'deal with it', 'look at it', 'check it', 'thoughts?', 'any ideas?', 'what do you think?',
  'what now', 'now what', 'next', 'whatever you think is best', 'do your magic', 'do something', 'make it pretty', 'make it nicer', 'fix everything',
  'fix all the things', 'just make it work', 'can you do it', 'the code', 'code', 'my code', 'my project', 'the app', 'the bug', 'bug', 'issue', 'problem',
  "there's a problem", 'it crashed', "it's slow", 'help with code', 'help with my code', '...', 'lol', 'asdf', 'hello?', 'are you there?',
  'you there?', 'can you fix it', 'fix it now', 'it is not right', 'wrong', "that's wrong", 'not what I wanted', 'do it again', 'make it work pls',
  'fix', 'fix pls', 'plz fix', 'improve', 'better', 'hmm not sure', 'whats up', 'same error', 'still the same', 'it still fails', 'ugh', 'help!!',
  'need help asap', 'can you look', 'look', 'see above', 'as discussed', 'like before', 'the other one', 'that one', 'this one', 'ok now what',
];

/** Lead-ins and endings that make a vague core no less vague. */
export const VAGUE_PREFIXES: readonly string[] = ['', '', 'hey ', 'ok ', 'so ', 'um ', 'please ', 'pls ', 'can you ', 'hi, ', 'sorry, '];
export const VAGUE_SUFFIXES: readonly string[] = ['', '', '', '?', '!', ' pls', ' please', ' thanks', ' asap', '...', ' :)'];
