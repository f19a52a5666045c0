import { buildBm25Index } from '../../src/evaluation/bm25-baseline';

describe('the BM25 file baseline', () => {
  const index = buildBm25Index([
    {
      path: 'lib/Pool.js',
      text:
        'function Pool(config) { this._freeConnections = []; }\nPool.prototype.getConnection = function getConnection(cb) { ' +
        'acquire(cb); };',
    },
    {
      path: 'lib/PoolConfig.js',
      text: 'function PoolConfig(options) { this.connectionLimit = options.connectionLimit || 10; this.queueLimit = 0; }',
    },
    { path: 'lib/Parser.js', text: 'Parser.prototype.parseLengthCodedNumber = function () { return this._buffer[this._offset++]; };' },
  ]);

  it('ranks files by identifier-split, stemmed words with IDF', () => {
    expect(index.rank('what is the default connection limit?', 10)[0]).toBe('lib/PoolConfig.js');
    expect(index.rank('how are length coded numbers parsed', 10)[0]).toBe('lib/Parser.js');
    expect(index.rank('getting free connections', 10)[0]).toBe('lib/Pool.js');
  });

  it('answers only files holding a word, at most the limit', () => {
    expect(index.rank('zebra', 10)).toEqual([]);
    expect(index.rank('pool connection', 1)).toHaveLength(1);
  });
});
