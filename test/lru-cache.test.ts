import { LruCache } from '../src/lru-cache';

describe('LruCache', () => {
  it('evicts the least recently used entry once full', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('refreshes an entry that is set again', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(10);
    expect(cache.get('b')).toBeUndefined();
  });

  it('keeps nothing with size 0', () => {
    const cache = new LruCache<string, number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

describe('LruCache bounded by weight', () => {
  const byLength = () => new LruCache<string, string>(10, (key, value) => key.length + value.length);

  it('evicts the least recently used entries until the total weight fits', () => {
    const cache = byLength();
    cache.set('a', 'xxxx'); // 5
    cache.set('b', 'yy'); // 3
    expect(cache.get('a')).toBe('xxxx');
    cache.set('c', 'zzz'); // 4: 12 in all, so b (least recently used) goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('xxxx');
    expect(cache.weight).toBe(9);
    cache.set('a', 'x'); // replacing an entry counts its new weight only
    expect(cache.weight).toBe(6);
  });

  it('does not keep an entry heavier than the bound, nor evict others for it', () => {
    const cache = byLength();
    cache.set('a', 'x');
    cache.set('big', 'x'.repeat(20));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.get('a')).toBe('x');
    expect(cache.weight).toBe(2);
  });
});
