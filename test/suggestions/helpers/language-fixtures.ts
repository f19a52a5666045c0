import { indent } from './cursor';

/**
 * Real code in every language intent detection parses, with `<|>` where the cursor is. `file`
 * places a snippet where declarations go, in a file that has at least five code lines of its own,
 * so the small-file rule stays out of the way unless a case asks for it.
 */
export type LanguageFixture = {
  fileName: string;
  language: string;
  /** The line comment marker. */
  line: string;
  /** A comment spanning lines with `text` on a line of its own, when the language has one. */
  blockComment: ((text: string) => string) | null;
  /** A one-line block comment, when the language has one. */
  inlineBlockComment: string | null;
  /** A doc comment saying "Fetch the users." then "Sorted by name." on two lines, when it is one block. */
  docComment: string | null;
  /** A declaration or statement that is valid where `file` puts snippets. */
  statement: string;
  file: (body: string) => string;
  /** Whole files of exactly 4 and exactly 5 code lines, with comments and blank lines between; the cursor ends the last code line. */
  fourCodeLines: string;
  fiveCodeLines: string;
  /** Snippets for `file`: the cursor in an empty function, and in a function with statements. */
  emptyFunction: string;
  nonEmptyFunction: string;
  /** More empty bodies (methods, constructors, lambdas...) for `file`, each expected to be an empty function. */
  emptyBodies: Array<[string, string]>;
  /** Snippets for `file` that must stay completions, language-specific edges. */
  completions: Array<[string, string]>;
  /** A whole small file whose one function has `inner` for body (the cursor, perhaps after a comment). */
  smallFunction: (inner: string) => string;
};

const bodyLines = (inner: string, spaces: number) =>
  inner
    .split('\n')
    .map((line) => ' '.repeat(spaces) + line)
    .join('\n');
const cBlock = (text: string) => `/*\n   ${text}\n*/`;
const C_DOC = '/**\n * Fetch the users.\n * Sorted by name.\n */';

export const LANGUAGES: LanguageFixture[] = [
  {
    fileName: 'app.js',
    language: 'javascript',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'let total = config.limit + 1;',
    file: (body) =>
      `import fs from 'node:fs';\nimport path from 'node:path';\n\nconst root = process.cwd();\nconst configPath = path.join(root, ` +
      `'config.json');\nconst config = JSON.parse(fs.readFileSync(configPath, 'utf8'));\n\n${body}\n`,
    fourCodeLines:
      "import fs from 'node:fs';\n// Reads the settings.\n\nconst raw = fs.readFileSync('settings.json', 'utf8');\n/* parsed once " +
      '*/\nconst settings = JSON.parse(raw);\nconsole.log(settings)<|>\n',
    fiveCodeLines:
      "import fs from 'node:fs';\n// Reads the settings.\n\nconst raw = fs.readFileSync('settings.json', 'utf8');\n/* parsed once " +
      '*/\nconst settings = JSON.parse(raw);\nconst port = settings.port;\nconsole.log(port)<|>\n',
    emptyFunction: 'function loadUsers(store) {\n  <|>\n}',
    nonEmptyFunction: 'function loadUsers(store) {\n  <|>\n  return store.all();\n}',
    emptyBodies: [
      ['an arrow function', 'const loadUsers = async (store) => {\n  <|>\n};'],
      ['a method in a class', 'class Users {\n  load(id) {\n    <|>\n  }\n}'],
      ['a constructor', 'class Users {\n  constructor(store) {\n    <|>\n  }\n}'],
      ['a function expression passed as an argument', "app.get('/users', function (request, response) {\n  <|>\n});"],
      ['a generator function', 'function* ids() {\n  <|>\n}'],
      ['braces on one line', 'function loadUsers(store) {<|>}'],
      ['a body holding only an earlier comment', 'function loadUsers(store) {\n  // TODO\n\n  <|>\n}'],
      ['a body left open at the end of the file', 'function loadUsers(store) {\n  <|>'],
    ],
    completions: [
      ['an arrow function with an expression body', 'const double = (value) => value * <|>2;'],
      [
        'an empty if block in a function with statements',
        'function loadUsers(store) {\n  const users = store.all();\n  if (users.length === 0) {\n    <|>\n  }\n  return users;\n}',
      ],
      ['between the methods of a class', 'class Users {\n  load() {}\n\n  <|>\n\n  save() {}\n}'],
      ['before the body of a function', 'function loadUsers(store) <|>{\n}'],
    ],
    smallFunction: (inner) => `function loadUsers(store) {\n${bodyLines(inner, 2)}\n}\n`,
  },
  {
    fileName: 'service.ts',
    language: 'typescript',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'let total: number = limit + 1;',
    file: (body) =>
      `import { readFileSync } from 'node:fs';\nimport type { Store, User } from './types';\n\nconst limit = 10;\nconst names: string[] ` +
      `= [];\nexport const users = new Map<string, User>();\n\n${body}\n`,
    fourCodeLines:
      "import { readFileSync } from 'node:fs';\n// Reads the settings.\n\nconst raw: string = readFileSync('settings.json', 'utf8');\n/* " +
      'parsed once */\nconst settings: Settings = JSON.parse(raw);\nexport default settings;<|>\n',
    fiveCodeLines:
      "import { readFileSync } from 'node:fs';\n// Reads the settings.\n\nconst raw: string = readFileSync('settings.json', 'utf8');\n/* " +
      'parsed once */\nconst settings: Settings = JSON.parse(raw);\nconst port: number = settings.port;\nexport default settings;<|>\n',
    emptyFunction: 'export function loadUsers(store: Store): User[] {\n  <|>\n}',
    nonEmptyFunction: 'export function loadUsers(store: Store): User[] {\n  <|>\n  return store.all();\n}',
    emptyBodies: [
      ['an arrow function', 'export const loadUsers = async (store: Store): Promise<User[]> => {\n  <|>\n};'],
      [
        'a method in a class',
        'export class Users {\n  private cache = new Map<string, User>();\n\n  load(id: string): User | undefined {\n    <|>\n  }\n}',
      ],
      ['a constructor', 'export class Users {\n  constructor(private readonly store: Store) {\n    <|>\n  }\n}'],
      ['a generic function', 'function first<T>(items: T[]): T | undefined {\n  <|>\n}'],
      [
        'an arrow function nested in a function with statements',
        'export function watch(store: Store): void {\n  store.subscribe();\n  store.on("change", () => {\n    <|>\n  });\n}',
      ],
    ],
    completions: [
      ['an interface body', 'interface Options {\n  <|>\n}'],
      ['a method signature in an interface', 'interface Loader {\n  load(id: string): User;\n  <|>\n}'],
      ['an empty object literal', 'const defaults: Record<string, number> = {\n  <|>\n};'],
    ],
    smallFunction: (inner) => `export function loadUsers(store: Store): User[] {\n${bodyLines(inner, 2)}\n}\n`,
  },
  {
    fileName: 'UserList.tsx',
    language: 'typescript',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'let total = limit + 1;',
    file: (body) =>
      `import React from 'react';\nimport { useState } from 'react';\n\nconst title = 'Users';\nconst limit = 10;\nexport const Header = ` +
      `() => <h1>{title}</h1>;\n\n${body}\n`,
    fourCodeLines:
      "import React from 'react';\n// The page title.\n\nconst title = 'Users';\n/* shown in the header */\nconst limit = 10;\nexport " +
      'const Header = () => <h1>{title}</h1>;<|>\n',
    fiveCodeLines:
      "import React from 'react';\n// The page title.\n\nconst title = 'Users';\n/* shown in the header */\nconst limit = 10;\nconst " +
      'size = 2;\nexport const Header = () => <h1>{title}</h1>;<|>\n',
    emptyFunction: 'export function UserList({ users }: { users: string[] }) {\n  <|>\n}',
    nonEmptyFunction:
      'export function UserList({ users }: { users: string[] }) {\n  <|>\n  return <ul>{users.map((user) => <li ' +
      'key={user}>{user}</li>)}</ul>;\n}',
    emptyBodies: [
      ['an arrow component', 'export const UserList = ({ users }: Props) => {\n  <|>\n};'],
      ['an event handler inside JSX', 'export const Save = () => <button onClick={() => {\n  <|>\n}}>Save</button>;'],
    ],
    completions: [['JSX children', 'export const Page = () => (\n  <main>\n    <|>\n  </main>\n);']],
    smallFunction: (inner) => `export function UserList() {\n${bodyLines(inner, 2)}\n}\n`,
  },
  {
    fileName: 'users.py',
    language: 'python',
    line: '#',
    blockComment: null,
    inlineBlockComment: null,
    docComment: null,
    statement: 'total = LIMIT + 1',
    file: (body) => `import os\nimport sys\n\nLIMIT = 10\nNAMES = []\nROOT = os.getcwd()\n\n${body}\n`,
    fourCodeLines: 'import os\n# Settings.\n\nLIMIT = 10\n\n# where we run\nROOT = os.getcwd()\nprint(ROOT)<|>\n',
    fiveCodeLines: 'import os\n# Settings.\n\nLIMIT = 10\nNAMES = []\n\n# where we run\nROOT = os.getcwd()\nprint(ROOT)<|>\n',
    emptyFunction: 'def load_users(store):\n    <|>',
    nonEmptyFunction: 'def load_users(store):\n    <|>\n    return store.all()',
    emptyBodies: [
      ['a method in a class', 'class Users:\n    def load(self, key):\n        <|>'],
      [
        'a constructor followed by another method',
        'class Users:\n    def __init__(self, store):\n        <|>\n\n    def load(self):\n        return self.store',
      ],
      ['a def followed by another def', 'def load_users(store):\n    <|>\n\n\ndef save_users(store):\n    store.save()'],
      ['an async def with a return annotation', 'async def load_users(store) -> list:\n    <|>'],
      ['a decorated def', '@cache\ndef load_users(store):\n    <|>'],
      ['a def with a comment on its header line, cursor two lines down', 'def load_users(store):  # slow\n\n    <|>'],
    ],
    completions: [
      ['the line after a def, not indented', 'def load_users(store):\n<|>'],
      ['a def whose body is pass', 'def load_users(store):\n    pass\n    <|>'],
      ['the header line of a def', 'def load_users(store):<|>'],
      ['an indented line in a class body', 'class Users:\n    <|>'],
      ['a lambda', 'loader = lambda store: <|>'],
    ],
    smallFunction: (inner) => `def load_users(store):\n${bodyLines(inner, 4)}\n`,
  },
  {
    fileName: 'users.rb',
    language: 'ruby',
    line: '#',
    blockComment: (text) => `=begin\n${text}\n=end`,
    inlineBlockComment: null,
    docComment: '=begin\nFetch the users.\nSorted by name.\n=end',
    statement: 'total = LIMIT + 1',
    file: (body) => `require 'json'\nrequire 'net/http'\n\nLIMIT = 10\nNAMES = []\nROOT = Dir.pwd\n\n${body}\n`,
    fourCodeLines: "require 'json'\n# Settings.\n\nLIMIT = 10\n=begin\nwhere we run\n=end\nROOT = Dir.pwd\nputs ROOT<|>\n",
    fiveCodeLines: "require 'json'\n# Settings.\n\nLIMIT = 10\nNAMES = []\n=begin\nwhere we run\n=end\nROOT = Dir.pwd\nputs ROOT<|>\n",
    emptyFunction: 'def load_users(store)\n  <|>\nend',
    nonEmptyFunction: 'def load_users(store)\n  <|>\n  store.all\nend',
    emptyBodies: [
      ['a method without parentheses', 'def load_users\n  <|>\nend'],
      ['a method in a class', 'class Users\n  def load(id)\n    <|>\n  end\nend'],
      ['a constructor (initialize)', 'class Users\n  def initialize(store)\n    <|>\n  end\nend'],
      ['a singleton method', 'class Users\n  def self.load(id)\n    <|>\n  end\nend'],
      ['a lambda', 'loader = ->(store) {\n  <|>\n}'],
      ['a def left open at the end of the file', 'def load_users(store)\n  <|>'],
    ],
    completions: [
      ['the header line of a def', 'def load_users(store)<|>\nend'],
      ['a block passed to a method call', 'NAMES.each do |name|\n  <|>\nend'],
    ],
    smallFunction: (inner) => `def load_users(store)\n${bodyLines(inner, 2)}\nend\n`,
  },
  {
    fileName: 'main.go',
    language: 'go',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'var total = limit + 1',
    file: (body) => `package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nvar limit = 10\n\n${body}\n`,
    fourCodeLines:
      'package main\n\n// Entry point.\nimport "fmt"\n\n/* the name */\nvar name = "users"\nvar greeting = fmt.Sprint(name)<|>\n',
    fiveCodeLines:
      'package main\n\n// Entry point.\nimport "fmt"\n\n/* the name */\nvar name = "users"\nvar limit = 10\nvar greeting = ' +
      'fmt.Sprint(name)<|>\n',
    emptyFunction: 'func loadUsers(store Store) []User {\n\t<|>\n}',
    nonEmptyFunction: 'func loadUsers(store Store) []User {\n\t<|>\n\treturn store.All()\n}',
    emptyBodies: [
      ['a method', 'func (s *Service) Load(id string) (User, error) {\n\t<|>\n}'],
      ['a function literal', 'var handler = func(w http.ResponseWriter, r *http.Request) {\n\t<|>\n}'],
      ['a goroutine literal in a function with statements', 'func main() {\n\tfmt.Println("start")\n\tgo func() {\n\t\t<|>\n\t}()\n}'],
    ],
    completions: [
      ['a struct body', 'type User struct {\n\t<|>\n}'],
      ['an empty if block in a function with statements', 'func main() {\n\tif len(os.Args) > 1 {\n\t\t<|>\n\t}\n\tfmt.Println("done")\n}'],
    ],
    smallFunction: (inner) => `package main\n\nfunc loadUsers() {\n${bodyLines(inner, 4)}\n}\n`,
  },
  {
    fileName: 'Users.java',
    language: 'java',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'private int total = limit + 1;',
    file: (body) =>
      `package demo;\n\nimport java.util.List;\n\npublic class Users {\n    private final int limit = 10;\n    private final ` +
      `List<String> names = List.of();\n\n${indent(body, 4)}\n}\n`,
    fourCodeLines: 'package demo;\n\n// Users.\nclass Users {\n    /* how many */\n    int limit = 10;\n}<|>\n',
    fiveCodeLines: 'package demo;\n\n// Users.\nclass Users {\n    /* how many */\n    int limit = 10;\n    int size = 2;\n}<|>\n',
    emptyFunction: 'public List<String> loadUsers(Store store) {\n    <|>\n}',
    nonEmptyFunction: 'public List<String> loadUsers(Store store) {\n    <|>\n    return store.all();\n}',
    emptyBodies: [
      ['a constructor', 'public Users(Store store) {\n    <|>\n}'],
      ['a lambda', 'private final Runnable reload = () -> {\n    <|>\n};'],
      ['a static method', 'public static Users of(Store store) {\n    <|>\n}'],
      ['a method in a nested class', 'static class Loader {\n    void load() {\n        <|>\n    }\n}'],
    ],
    completions: [
      ['a class body', 'static class Loader {\n    <|>\n}'],
      ['an abstract method declaration', 'abstract void load();<|>'],
    ],
    smallFunction: (inner) => `class Users {\n    void load() {\n${bodyLines(inner, 8)}\n    }\n}\n`,
  },
  {
    fileName: 'lib.rs',
    language: 'rust',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'const TOTAL: usize = LIMIT + 1;',
    file: (body) =>
      `use std::collections::HashMap;\nuse std::fs;\n\nconst LIMIT: usize = 10;\nstatic NAME: &str = "users";\n\npub struct Store {\n    ` +
      `users: HashMap<String, String>,\n}\n\n${body}\n`,
    fourCodeLines:
      'use std::fs;\n\n// Reads the file.\nconst PATH: &str = "a.txt";\n/* at most */\nstatic LIMIT: usize = 3;\nfn main() {}<|>\n',
    fiveCodeLines:
      'use std::fs;\n\n// Reads the file.\nconst PATH: &str = "a.txt";\n/* at most */\nstatic LIMIT: usize = 3;\nconst SIZE: u8 = 1;\nfn ' +
      'main() {}<|>\n',
    emptyFunction: 'pub fn load_users(store: &Store) -> Vec<String> {\n    <|>\n}',
    nonEmptyFunction: 'pub fn load_users(store: &Store) -> Vec<String> {\n    <|>\n    store.users.keys().cloned().collect()\n}',
    emptyBodies: [
      ['a method in an impl', 'impl Store {\n    pub fn load(&self, id: &str) -> Option<String> {\n        <|>\n    }\n}'],
      ['a constructor function', 'impl Store {\n    pub fn new() -> Self {\n        <|>\n    }\n}'],
      [
        'a closure in a function with statements',
        'fn main() {\n    let store = Store::default();\n    let load = |id: &str| {\n        <|>\n    };\n}',
      ],
    ],
    completions: [
      ['a struct body', 'struct User {\n    <|>\n}'],
      ['a trait method declaration', 'trait Loader {\n    fn load(&self);<|>\n}'],
    ],
    smallFunction: (inner) => `fn load_users() {\n${bodyLines(inner, 4)}\n}\n`,
  },
  {
    fileName: 'users.c',
    language: 'c',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'int total = 11;',
    file: (body) =>
      `#include <stdio.h>\n#include <stdlib.h>\n\nstatic int limit = 10;\nstatic const char *name = "users";\n\nstruct store {\n    int ` +
      `size;\n};\n\n${body}\n`,
    fourCodeLines: '#include <stdio.h>\n\n/* Entry. */\nint limit = 10;\n// the size\nint size = 2;\nint main(void) { return 0; }<|>\n',
    fiveCodeLines:
      '#include <stdio.h>\n\n/* Entry. */\nint limit = 10;\n// the size\nint size = 2;\nint count = 1;\nint main(void) { return 0; }<|>\n',
    emptyFunction: 'int load_users(struct store *store) {\n    <|>\n}',
    nonEmptyFunction: 'int load_users(struct store *store) {\n    <|>\n    return store->size;\n}',
    emptyBodies: [['a function with its brace on the next line', 'void reset(void)\n{\n    <|>\n}']],
    completions: [['a struct body', 'struct user {\n    <|>\n};']],
    smallFunction: (inner) => `int main(void) {\n${bodyLines(inner, 4)}\n}\n`,
  },
  {
    fileName: 'users.cpp',
    language: 'cpp',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'int total = limit + 1;',
    file: (body) =>
      `#include <string>\n#include <vector>\n\nstatic int limit = 10;\nstd::vector<std::string> names;\n\nclass Store {\n public:\n    ` +
      `int size = 0;\n};\n\n${body}\n`,
    fourCodeLines:
      '#include <string>\n\n/* Entry. */\nint limit = 10;\n// the name\nstd::string name = "users";\nint main() { return 0; }<|>\n',
    fiveCodeLines:
      '#include <string>\n\n/* Entry. */\nint limit = 10;\n// the name\nstd::string name = "users";\nint size = 2;\nint main() { return ' +
      '0; }<|>\n',
    emptyFunction: 'std::vector<std::string> loadUsers(const Store& store) {\n    <|>\n}',
    nonEmptyFunction: 'std::vector<std::string> loadUsers(const Store& store) {\n    <|>\n    return names;\n}',
    emptyBodies: [
      ['a method in a class', 'class Users {\n public:\n    void load(int id) {\n        <|>\n    }\n};'],
      ['a constructor', 'class Users {\n public:\n    Users(Store& store) {\n        <|>\n    }\n};'],
      ['a method defined outside its class', 'void Users::load(int id) {\n    <|>\n}'],
      ['a lambda', 'auto load = [](int id) {\n    <|>\n};'],
    ],
    completions: [['a class body', 'class Users {\n public:\n    <|>\n};']],
    smallFunction: (inner) => `int main() {\n${bodyLines(inner, 4)}\n}\n`,
  },
  {
    fileName: 'Users.cs',
    language: 'csharp',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'private int _total = 11;',
    file: (body) =>
      `using System;\nusing System.Collections.Generic;\n\nnamespace Demo\n{\n    public class Users\n    {\n        private readonly ` +
      `int _limit = 10;\n\n${indent(body, 8)}\n    }\n}\n`,
    fourCodeLines: 'using System;\n\n// Users.\nclass Users {\n    /* how many */\n    int limit = 10;\n}<|>\n',
    fiveCodeLines: 'using System;\n\n// Users.\nclass Users {\n    /* how many */\n    int limit = 10;\n    int size = 2;\n}<|>\n',
    emptyFunction: 'public List<string> LoadUsers(Store store)\n{\n    <|>\n}',
    nonEmptyFunction: 'public List<string> LoadUsers(Store store)\n{\n    <|>\n    return store.All();\n}',
    emptyBodies: [
      ['a constructor', 'public Users(Store store)\n{\n    <|>\n}'],
      ['a lambda', 'private readonly Action _reload = () =>\n{\n    <|>\n};'],
      [
        'a local function in a method with statements',
        'public void Run()\n{\n    Console.WriteLine("run");\n    void Local()\n    {\n        <|>\n    }\n}',
      ],
      ['a method with its brace on the same line', 'public void Clear() {\n    <|>\n}'],
    ],
    completions: [
      ['a property accessor list', 'public int Size { get; <|>}'],
      ['an expression-bodied method', 'public int Count() => _limit<|>;'],
    ],
    smallFunction: (inner) => `class Users {\n    void Load() {\n${bodyLines(inner, 8)}\n    }\n}\n`,
  },
  {
    fileName: 'users.php',
    language: 'php',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: '$total = $limit + 1;',
    file: (body) => `<?php\n\nnamespace App;\n\nuse App\\Models\\User;\n\n$limit = 10;\n$names = [];\n\n${body}\n`,
    fourCodeLines: '<?php\n\n// Users.\n$limit = 10;\n# the names\n$names = [];\necho $limit;<|>\n',
    fiveCodeLines: '<?php\n\n// Users.\n$limit = 10;\n# the names\n$names = [];\n$size = 2;\necho $limit;<|>\n',
    emptyFunction: 'function load_users($store)\n{\n    <|>\n}',
    nonEmptyFunction: 'function load_users($store)\n{\n    <|>\n    return $store->all();\n}',
    emptyBodies: [
      ['a method in a class', 'class Users\n{\n    public function load(int $id): ?User\n    {\n        <|>\n    }\n}'],
      ['a constructor', 'class Users\n{\n    public function __construct(private Store $store)\n    {\n        <|>\n    }\n}'],
      ['a closure', '$load = function ($store) {\n    <|>\n};'],
    ],
    completions: [
      ['an arrow function (an expression)', '$double = fn($value) => $value * <|>2;'],
      ['a class body', 'class Users\n{\n    <|>\n}'],
    ],
    smallFunction: (inner) => `<?php\nfunction load_users() {\n${bodyLines(inner, 4)}\n}\n`,
  },
  {
    fileName: 'Users.kt',
    language: 'kotlin',
    line: '//',
    blockComment: cBlock,
    inlineBlockComment: '/* fetch the users */',
    docComment: C_DOC,
    statement: 'val total = limit + 1',
    file: (body) => `package demo\n\nimport java.io.File\n\nval limit = 10\nval names = listOf("a")\nval root = File(".")\n\n${body}\n`,
    fourCodeLines: 'package demo\n\n// Users.\nval limit = 10\n/* how many */\nval size = 2\nfun main() {}<|>\n',
    fiveCodeLines: 'package demo\n\n// Users.\nval limit = 10\n/* how many */\nval size = 2\nval count = 1\nfun main() {}<|>\n',
    emptyFunction: 'fun loadUsers(store: Store): List<String> {\n    <|>\n}',
    nonEmptyFunction: 'fun loadUsers(store: Store): List<String> {\n    <|>\n    return store.all()\n}',
    emptyBodies: [
      ['a method in a class', 'class Users(private val store: Store) {\n    fun load(id: String): String? {\n        <|>\n    }\n}'],
      ['a secondary constructor', 'class Users {\n    constructor(store: Store) {\n        <|>\n    }\n}'],
      ['a lambda', 'val reload = {\n    <|>\n}'],
      ['a lambda with parameters', 'val load = { id: String ->\n    <|>\n}'],
    ],
    completions: [
      ['a class body', 'class Users {\n    <|>\n}'],
      ['an expression body', 'fun double(value: Int) = value * <|>2'],
    ],
    smallFunction: (inner) => `fun loadUsers() {\n${bodyLines(inner, 4)}\n}\n`,
  },
];
