import ignore from 'ignore';

/**
 * A project's Duo context exclusions (GitLab's `duoContextExclusionSettings.exclusionRules`,
 * gitignore patterns): whether a path is kept out of everything Duo shows of the project's code
 * (search results, files, directories, suggested questions). The index leaves excluded files out
 * too, but a snapshot built before a rule was added still holds them, so readers check again.
 */
export function isExcludedBy(patterns: readonly string[] | undefined): (path: string) => boolean {
  if (!patterns?.length) return () => false;
  const rules = ignore().add([...patterns]);
  return (path) => rules.ignores(path);
}
