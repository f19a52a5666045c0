import { declaresOnly, snippetShape } from '../../src/search/boilerplate';
import { chooseSnippets, snippetIntent } from '../../src/search/choose-snippets';
import { queryTerms } from '../../src/search/text-query';

const lines = (...text: string[]) => text.join('\n');

// The tops of real files, one per language: what is boilerplate, and where the code starts.
describe('snippetShape', () => {
  it.each([
    [
      'TypeScript imports, multi-line included',
      'src/a.ts',
      lines(
        "import { timingSafeEqual } from 'node:crypto';",
        'import {',
        '  digestToken,',
        '  hashToken,',
        "} from '../auth/tokens';",
        "import type { Redis } from 'ioredis';",
      ),
    ],
    [
      'TypeScript re-exports',
      'src/index.ts',
      lines(
        "export * from './search';",
        "export { codebaseSearch, type SearchResult } from './codebase';",
        'export {',
        '  a,',
        '  b,',
        '};',
      ),
    ],
    [
      'CommonJS requires',
      'lib/Pool.js',
      lines(
        "var mysql          = require('../');",
        "var EventEmitter   = require('events').EventEmitter;",
        "var Util = require('util'),",
        "    Net = require('net');",
        '',
        "'use strict';",
        'module.exports = Pool;',
      ),
    ],
    [
      "compiled TypeScript's preamble",
      'built/index.js',
      lines(
        '"use strict";',
        'Object.defineProperty(exports, "__esModule", { value: true });',
        'exports.readyHandler = exports.connectHandler = void 0;',
        'const tslib_1 = require("tslib");',
        'var Redis_1 = require("./Redis");',
        'Object.defineProperty(exports, "default", { enumerable: true, get: function () { return Redis_1.default; } });',
        'tslib_1.__exportStar(require("./types"), exports);',
      ),
    ],
    [
      'a re-export list of requires',
      'lib/protocol/packets/index.js',
      lines("exports.OkPacket = require('./OkPacket');", "exports.EofPacket = require('./EofPacket');"),
    ],
    [
      'Python imports, parenthesised and TYPE_CHECKING',
      'src/click/core.py',
      lines(
        'import enum',
        'import typing as t',
        'from collections import abc',
        'from .exceptions import (',
        '    Abort,',
        '    BadParameter,',
        ')',
        '',
        'if t.TYPE_CHECKING:',
        '    from .shell_completion import CompletionItem',
        "__all__ = ['Context', 'Command']",
      ),
    ],
    ['Go package and import block', 'args.go', lines('package cobra', '', 'import (', '\t"fmt"', '\tflag "github.com/spf13/pflag"', ')')],
    [
      'Java package and imports',
      'src/main/java/App.java',
      lines('package com.example.app;', '', 'import java.util.List;', 'import static java.util.Objects.requireNonNull;'),
    ],
    ['Ruby requires', 'lib/invoice.rb', lines("require 'json'", "require_relative 'mailer'", "autoload :Parser, 'invoice/parser'")],
    [
      'Rust uses, mods and crate attributes',
      'src/lib.rs',
      lines(
        '#![deny(missing_docs)]',
        'use std::collections::{',
        '    HashMap,',
        '    HashSet,',
        '};',
        'pub use crate::config::Config;',
        'mod parser;',
        'extern crate serde;',
      ),
    ],
    [
      'C includes and an include guard',
      'src/buffer.h',
      lines('#ifndef BUFFER_H', '#define BUFFER_H', '', '#include <stdio.h>', '#include "arena.h"'),
    ],
    [
      'a license header',
      'args.go',
      lines(
        '// Copyright 2013-2023 The Cobra Authors',
        '//',
        '// Licensed under the Apache License, Version 2.0 (the "License");',
        '// you may not use this file except in compliance with the License.',
      ),
    ],
    ['a C license block comment', 'src/buffer.c', lines('/*', ' * SPDX-License-Identifier: MIT', ' */', '#include <stdlib.h>')],
  ])('%s is boilerplate', (_name, path, content) => {
    expect(snippetShape({ content, language: null, path })).toMatchObject({ boilerplate: true });
  });

  it.each([
    [
      'TypeScript',
      'src/a.ts',
      lines(
        "import { timingSafeEqual } from 'node:crypto';",
        '',
        '/** Compares digests. */',
        'export function same(a: Buffer, b: Buffer) {',
        '  return timingSafeEqual(a, b);',
        '}',
      ),
      2,
    ],
    [
      'Python',
      'src/click/globals.py',
      lines(
        'import typing as t',
        'from threading import local',
        '',
        '_local = local()',
        '',
        'def get_current_context():',
        '    return _local.stack[-1]',
        '',
      ),
      3,
    ],
    [
      'Go',
      'args.go',
      lines(
        '// Copyright 2013-2023 The Cobra Authors',
        '// Licensed under the Apache License',
        '',
        'package cobra',
        '',
        'import (',
        '\t"fmt"',
        ')',
        '',
        'func NoArgs(cmd *Command, args []string) error {',
        '\tif len(args) > 0 {',
        '\t\treturn fmt.Errorf("unknown command")',
        '\t}',
        '\treturn nil',
        '}',
      ),
      9,
    ],
    ['Ruby', 'lib/invoice.rb', lines("require 'json'", '', 'class Invoice', '  def total', '    lines.sum(&:amount)', '  end', 'end'), 2],
  ])('%s code after boilerplate is shown from its doc comment or first line', (_name, path, content, leading) => {
    expect(snippetShape({ content, language: null, path })).toMatchObject({ boilerplate: false, leading });
  });

  it.each([
    [
      'a constants table',
      'lib/protocol/constants/types.js',
      lines('exports.DECIMAL     = 0x00;', 'exports.TINY        = 0x01;', 'exports.SHORT       = 0x02;'),
    ],
    ['a doc comment alone', 'src/a.ts', lines('/**', ' * Computes the tax.', ' */')],
    [
      'a Python docstring and code',
      'src/click/core.py',
      lines('class Context:', '    """The context holds state."""', '', '    def __init__(self):', '        self.obj = None'),
    ],
    [
      'code that mentions import',
      'src/loader.ts',
      lines('export async function load(name: string) {', '  const module = await import(name);', '  return module.default;', '}'),
    ],
  ])('%s is not boilerplate', (_name, path, content) => {
    expect(snippetShape({ content, language: null, path })).toMatchObject({ boilerplate: false, leading: 0 });
  });

  it('takes a preamble with a line or two of code after it for the preamble', () => {
    const content = lines(
      '"use strict";',
      'Object.defineProperty(exports, "__esModule", { value: true });',
      'const utils_1 = require("../utils");',
      'const debug = (0, utils_1.Debug)("cluster");',
      'class ClusterSubscriber {',
    );
    expect(snippetShape({ content, language: 'javascript', path: 'built/cluster/ClusterSubscriber.js' })).toMatchObject({
      boilerplate: true,
    });
  });
});

describe('chooseSnippets', () => {
  const imports = {
    startLine: 1,
    endLine: 3,
    content: lines("import a from 'a';", "import b from 'b';", "import c from 'c';"),
    score: 1,
    symbol: null,
  };
  const check = {
    startLine: 5,
    endLine: 7,
    content: lines('export function checkToken(token: string) {', '  return token === secret;', '}'),
    score: 0.6,
    symbol: 'checkToken',
  };
  const other = {
    startLine: 20,
    endLine: 22,
    content: lines('export function other() {', '  return 1;', '}'),
    score: 0.8,
    symbol: 'other',
  };
  const options = { path: 'src/hooks.ts', language: 'typescript', terms: ['check', 'token'] };

  it('leaves the import block out and puts the chunk that holds the question first, whatever its line', () => {
    const chosen = chooseSnippets([imports, other, check], { ...options, intent: snippetIntent('where is the token checked?') });
    expect(chosen.map((snippet) => snippet.startLine)).toEqual([5, 20]);
  });

  it('gives the import block first to a question about imports', () => {
    const chosen = chooseSnippets([imports, other, check], {
      ...options,
      terms: ['modules', 'hooks', 'import'],
      intent: snippetIntent('which modules does hooks import?'),
    });
    expect(chosen[0]).toMatchObject({ startLine: 1, endLine: 3 });
  });

  it("keeps a file's boilerplate when it has nothing else", () => {
    expect(chooseSnippets([imports], { ...options, intent: snippetIntent('token') })).toEqual([imports]);
  });

  it('merges touching snippets and keeps the best few', () => {
    const next = { ...check, startLine: 8, endLine: 9, content: lines('export const secret = "s";', ''), score: 0.5 };
    const chosen = chooseSnippets([other, check, next], { ...options, intent: snippetIntent('token'), maxPerFile: 2 });
    expect(chosen.map((snippet) => [snippet.startLine, snippet.endLine])).toEqual([
      [5, 7],
      [20, 22],
    ]);
  });

  it.each([
    ['what does the push webhook module import?', ['imports']],
    ['which license is this under?', ['license']],
    ['what does the package main module export?', ['exports']],
    ['where is the push webhook token checked?', []],
  ])('reads what %s asks about', (question, kinds) => {
    expect([...snippetIntent(question)]).toEqual(kinds);
  });
});

describe('declaresOnly', () => {
  it.each([
    [
      'a TypeScript options type',
      'src/hooks.ts',
      lines(
        'export type HandlePushOptions = {',
        '  prisma: PrismaClient;',
        '  /** X-Gitlab-Token. */',
        '  token: string | null;',
        '  eventUuid: string | null;',
        '};',
      ),
      true,
    ],
    [
      'Go struct fields',
      'command.go',
      lines(
        'type Command struct {',
        '	// Use is the one-line usage message.',
        '	Use string',
        '	Aliases []string',
        '	TraverseChildren bool',
        '}',
      ),
      true,
    ],
    [
      'a function',
      'src/hooks.ts',
      lines(
        'function sameDigest(expected: string, token: string): boolean {',
        "  const actual = Buffer.from(digestToken(token), 'hex');",
        '  return timingSafeEqual(actual, wanted);',
        '}',
      ),
      false,
    ],
  ])('%s: %s', (_name, path, content, expected) => {
    const shape = snippetShape({ content, language: null, path });
    expect(declaresOnly({ content, lines: shape.lines })).toBe(expected);
  });

  it('puts the code that checks before the type of its options, unless the question asks about types', () => {
    const type = {
      startLine: 12,
      endLine: 17,
      content: lines('export type CheckOptions = {', '  token: string;', '  secret: string;', '  strict: boolean;', '};'),
      score: 1,
      symbol: 'CheckOptions',
    };
    const check = {
      startLine: 20,
      endLine: 22,
      content: lines('export function checkToken(options: CheckOptions) {', '  return options.token === options.secret;', '}'),
      score: 0.9,
      symbol: 'checkToken',
    };
    const ask = (question: string) =>
      chooseSnippets([type, check], {
        path: 'src/hooks.ts',
        language: 'typescript',
        question,
        terms: queryTerms(question),
        intent: snippetIntent(question),
      })[0].startLine;
    expect(ask('where is the token checked?')).toBe(20);
    expect(ask('which fields does the token check type have?')).toBe(12);
  });
});
