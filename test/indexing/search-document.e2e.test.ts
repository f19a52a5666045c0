import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chunkAndEmbed, chunkEmbedSpec } from '../../src/indexing/chunk-embed';
import { tsvectorBinary } from '../../src/db/pg-binary';
import {
  chunkEmbeddingText,
  searchDocumentOf,
  searchDocumentOfTerms,
  searchTextOfTerms,
  tsvectorOfSearchText,
} from '../../src/indexing/search-text';
import { identifierTerms, LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { TEST_ADMIN_DATABASE_URL } from '../helpers/test-env';

// The indexer makes each chunk's full-text document itself (tsvectorOfSearchText) instead of asking
// PostgreSQL's to_tsvector('simple', ...): the two must give the same tsvector, or search changes.
describe("a chunk's full-text document", () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_ADMIN_DATABASE_URL });
    await client.connect();
    // Words over 2,047 bytes draw a NOTICE from to_tsvector.
    await client.query('SET client_min_messages = warning');
  });
  afterAll(() => client.end());

  async function differences(texts: string[]): Promise<Array<{ text: string; theirs: string; mine: string }>> {
    const { rows } = await client.query<{ i: string; theirs: string; mine: string }>(
      `SELECT i, to_tsvector('simple', s)::text AS theirs, m::tsvector::text AS mine
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(s, m, i)
        WHERE to_tsvector('simple', s) IS DISTINCT FROM m::tsvector OR to_tsvector('simple', s)::text <> m::tsvector::text`,
      [texts, texts.map(tsvectorOfSearchText)],
    );
    return rows.map((row) => ({ text: texts[Number(row.i) - 1].slice(0, 200), theirs: row.theirs, mine: row.mine }));
  }

  it("is PostgreSQL's to_tsvector('simple') of the chunk's words, for every chunk of the fixture files", async () => {
    const directory = path.join(__dirname, 'fixtures');
    const files = readdirSync(directory).map((name) => ({
      path: `src/${name}`,
      content: readFileSync(path.join(directory, name), 'utf8'),
    }));
    const chunks = (await chunkAndEmbed(files, chunkEmbedSpec(new LexicalEmbedder()))).flat();
    expect(chunks.length).toBeGreaterThan(20);
    const texts = chunks.map((chunk) => searchTextOfTerms(identifierTerms(chunkEmbeddingText(chunk))));
    expect(chunks.map((chunk) => chunk.searchDocument)).toEqual(texts.map((text) => tsvectorBinary(searchDocumentOf(text))));
    expect(await differences(texts)).toEqual([]);
  });

  it("is to_tsvector's also where the parser splits a word, and at tsvector's limits", async () => {
    const texts = [
      // Scientific notation followed by letters is a number and a word; other digit-letter mixes are one word.
      'abc_def 12 a1 1a 1e5 0x1f x_1 12_34 abc12_def 1e 1e10x e5 1e5e5 12e3abc 0e0 00e00x parse_connection',
      // A word of 2,048 bytes or more is left out (and takes no position); positions stop at 16,383.
      `${'a'.repeat(2_048)} b ${'c'.repeat(2_047)} d`,
      'x '.repeat(20_000),
      // A word keeps at most 255 positions.
      'zz yy '.repeat(300),
      '',
    ];
    expect(await differences(texts)).toEqual([]);
    expect(tsvectorOfSearchText('parse connection parse_connection parse')).toBe("'parse':1,3,5 'connection':2,4");
    // The indexer makes the document from the terms directly (searchDocumentOfTerms): the same as from their text.
    const terms = [
      'parse',
      'connection',
      'parse_connection',
      'parse',
      '1e5x',
      'x_1',
      '12e3abc',
      'abc12_def',
      'e5',
      ...Array(9).fill('retry'),
    ];
    expect(searchDocumentOfTerms(terms)).toEqual(searchDocumentOf(searchTextOfTerms(terms)));
    expect(searchDocumentOfTerms([])).toEqual(new Map());
  });
});
