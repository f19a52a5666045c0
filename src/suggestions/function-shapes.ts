import type { GrammarName } from '../parsing';

/**
 * How a function's body is delimited: `braces` (`{ }`, and Ruby's `do ... end` blocks), `def-end`
 * (Ruby's `def name ... end`, whose empty body leaves no node), or `indented` (Python's `def name():`
 * followed by an indented block).
 */
export type BodyStyle = 'braces' | 'def-end' | 'indented';

const braces = (...types: string[]) => types.map((type) => [type, 'braces'] as const);

const JAVASCRIPT = braces(
  'function_declaration',
  'function_expression',
  'function',
  'generator_function',
  'generator_function_declaration',
  'arrow_function',
  'method_definition',
);

/** Node types of functions, methods, constructors and lambdas, per grammar, with how their bodies are delimited. */
export const FUNCTION_SHAPES: Readonly<Record<GrammarName, ReadonlyMap<string, BodyStyle>>> = {
  javascript: new Map(JAVASCRIPT),
  typescript: new Map(JAVASCRIPT),
  tsx: new Map(JAVASCRIPT),
  python: new Map([['function_definition', 'indented']]),
  ruby: new Map([
    ['method', 'def-end'],
    ['singleton_method', 'def-end'],
    ['lambda', 'braces'],
  ]),
  go: new Map(braces('function_declaration', 'method_declaration', 'func_literal')),
  java: new Map(braces('method_declaration', 'constructor_declaration', 'compact_constructor_declaration', 'lambda_expression')),
  rust: new Map(braces('function_item', 'closure_expression')),
  c: new Map(braces('function_definition')),
  cpp: new Map(braces('function_definition', 'lambda_expression')),
  csharp: new Map(
    braces(
      'method_declaration',
      'constructor_declaration',
      'destructor_declaration',
      'operator_declaration',
      'local_function_statement',
      'lambda_expression',
      'anonymous_method_expression',
    ),
  ),
  php: new Map(braces('function_definition', 'method_declaration', 'anonymous_function')),
  kotlin: new Map(braces('function_declaration', 'secondary_constructor', 'anonymous_function', 'lambda_literal')),
};
