const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a over UTF-16 code units: stable across runs and machines, which both the feature buckets
 * in a committed model and the held-out split depend on.
 */
export function fnv1a(text: string, seed: number = FNV_OFFSET): number {
  let hash = seed;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** Seeds one hash space per feature group, so "fix" as a word and "fix" as a char gram differ. */
export function seedFor(namespace: string): number {
  return fnv1a(namespace);
}
