/**
 * What a file in a repository is for, from its path alone: the code itself, its tests, type
 * declarations, documentation, a changelog, examples, or generated output. Recorded in each
 * snapshot's manifest at indexing (code_index_files.role) and used by search to prefer the
 * implementation unless a question asks for the others (src/search/file-ranking.ts).
 */
export const FILE_ROLES = ['implementation', 'test', 'types', 'docs', 'changelog', 'example', 'generated'] as const;
export type FileRole = (typeof FILE_ROLES)[number];

const CHANGELOG = /^(changelog|changes|history|news|release[-_ ]?notes)(\.[a-z]+)?$/i;
const DOC_EXTENSIONS = /\.(md|markdown|mdx|rst|adoc|asciidoc|txt|textile|org|pod|rdoc)$/i;
const DOC_NAMES = /^(readme|contributing|license|licence|copying|authors|code_of_conduct|conduct|security|maintainers|notice)(\.[a-z]+)?$/i;
const DOC_DIRECTORIES = /(^|\/)(docs?|documentation|site|website|man)\//i;
const TEST_DIRECTORIES = /(^|\/)(tests?|__tests__|spec|specs|testing|testdata|test_data|fixtures|__mocks__|e2e)\//i;
const TEST_NAMES = [
  /[._-](test|spec)s?\.[a-z0-9]+$/i, // foo.test.ts, foo.spec.js, foo-test.js
  /_test\.(go|py|rb|exs?|c|cc|cpp|rs)$/i, // foo_test.go, foo_test.py
  /^test_[^/]*\.py$/i, // test_foo.py
  /^(conftest\.py|setup_tests?\.[jt]s)$/i,
  /(Test|Tests|Spec|IT)\.(java|kt|scala|cs|php|swift)$/, // FooTest.java
];
const TYPE_DECLARATIONS = /\.d\.[cm]?ts$|\.pyi$|\.rbi$/i;
const EXAMPLE_DIRECTORIES = /(^|\/)(examples?|samples?|demos?|benchmarks?|bench)\//i;
const GENERATED = /(^|\/)(dist|build|out|generated|__generated__|gen)\/|\.(min|bundle|generated|pb)\.[a-z]+$|_pb2(_grpc)?\.py$|\.g\.dart$/i;

/** The role of the file at `path` (relative to the repository root, `/`-separated). */
export function fileRole(path: string): FileRole {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (CHANGELOG.test(name)) return 'changelog';
  if (TYPE_DECLARATIONS.test(name)) return 'types';
  if (TEST_NAMES.some((pattern) => pattern.test(name)) || TEST_DIRECTORIES.test(path)) return 'test';
  if (DOC_EXTENSIONS.test(name) || DOC_NAMES.test(name) || (DOC_DIRECTORIES.test(path) && !/\.(js|ts|py|go|rb|java|c|h|rs)$/i.test(name)))
    return 'docs';
  if (EXAMPLE_DIRECTORIES.test(path)) return 'example';
  if (GENERATED.test(path)) return 'generated';
  return 'implementation';
}
