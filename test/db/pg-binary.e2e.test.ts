import pg from 'pg';
import {
  binaryArray,
  float32Of,
  int4Array,
  textArray,
  TSVECTOR_TYPE,
  tsvectorBinary,
  tsvectorTextOfBinary,
  vectorBinary,
  vectorTextOfBinary,
} from '../../src/db/pg-binary';
import { searchDocumentOf, tsvectorOfSearchText } from '../../src/indexing/search-text';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

// The binary forms an index run sends must give the values the text forms gave, read by PostgreSQL itself.
describe("PostgreSQL's binary forms (pg-binary.ts)", () => {
  let database: TestDatabase;
  let client: pg.Client;
  let vectorType: number;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    vectorType = (await client.query<{ oid: number }>("SELECT 'vector'::regtype::oid::int AS oid")).rows[0].oid;
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  /** Rows where the vector sent in binary differs from pgvector's reading of the number printed. */
  async function vectorDifferences(values: number[]) {
    const { rows } = await client.query<{ value: string; binary: string; text: string }>(
      `SELECT t AS value, b::text AS binary, t::vector::text AS text FROM unnest($1::vector[], $2::text[]) AS x(b, t)
        WHERE b <> t::vector OR b::text <> t::vector::text`,
      [
        binaryArray(
          vectorType,
          values.map((value) => vectorBinary([value])),
        ),
        values.map((value) => `[${value}]`),
      ],
    );
    return rows;
  }

  // Halfway between two floats: Math.fround rounds the tie to even, strtof follows the printed decimal.
  const halfway = [1 + 2 ** -24, -(1 + 2 ** -24), 1 + 3 * 2 ** -24, 1 - 2 ** -25, 0.5 + 2 ** -25, 3 * 2 ** -26 + 2 ** -50, 2 ** -130 * 1.5];

  it('rounds each number as pgvector reads its printed decimal, also halfway between two floats', async () => {
    const fround = halfway.filter((value) => float32Of(value) !== Math.fround(value));
    // The case the rounding exists for does occur: the plain single-precision rounding would store another number.
    expect(fround.length).toBeGreaterThan(0);
    const lexical = await new LexicalEmbedder().embed(['parseConnection retries the socket', 'class InvoiceMailer < ApplicationMailer']);
    const values = [...halfway, 0, -0, 0.1, 1 / 3, -2.5e-8, 1e-45, 3.4e38, ...lexical.flat()];
    expect(await vectorDifferences(values)).toEqual([]);
    const [vector] = lexical;
    const { rows } = await client.query<{ same: boolean }>('SELECT ($1::vector(512) = $2::text::vector) AS same', [
      Buffer.from(vectorBinary(vector)),
      `[${vector.join(',')}]`,
    ]);
    expect(rows[0].same).toBe(true);
    expect(vectorTextOfBinary(vectorBinary([0.5, -1]))).toBe('[0.5,-1]');
  });

  it("sends the tsvector to_tsvector('simple') makes of a search text, laid out the same", async () => {
    const texts = [
      'parse connection parse_connection parse',
      'zeta alpha alp alphabet a1 1e5x 12_34 beta',
      // Beyond ASCII, tsvector orders lexemes by their UTF-8 bytes.
      'größe zeta café cafe ünï a älpha alpha zz',
      `${'a'.repeat(2_048)} b ${'c'.repeat(2_047)} d`,
      'x '.repeat(20_000),
      'zz yy '.repeat(300),
      '',
    ];
    // Stored in a table, one value per row, as code_chunks stores them (sizes as stored: a small value has a short header there).
    await client.query('CREATE TEMP TABLE documents (i int, form text, document tsvector)');
    await client.query(
      `INSERT INTO documents SELECT i, 'binary', m FROM unnest($1::tsvector[]) WITH ORDINALITY AS x(m, i)
       UNION ALL SELECT i, 'to_tsvector', to_tsvector('simple', s) FROM unnest($2::text[]) WITH ORDINALITY AS x(s, i)`,
      [
        binaryArray(
          TSVECTOR_TYPE,
          texts.map((text) => tsvectorBinary(searchDocumentOf(text))),
        ),
        texts,
      ],
    );
    const { rows } = await client.query<{ i: number }>(
      `SELECT a.i FROM documents a JOIN documents b ON b.i = a.i AND b.form = 'to_tsvector'
        WHERE a.form = 'binary' AND (a.document <> b.document OR a.document::text <> b.document::text
           OR pg_column_size(a.document) <> pg_column_size(b.document))`,
    );
    expect((await client.query("SELECT i FROM documents WHERE form = 'binary'")).rows).toHaveLength(texts.length);
    expect(rows).toEqual([]);
    // The text form a client without a pool sends instead: PostgreSQL's own output, lexemes in its order.
    const theirs = await client.query<{ text: string }>("SELECT to_tsvector('simple', s)::text AS text FROM unnest($1::text[]) AS s", [
      texts,
    ]);
    expect(texts.map((text) => tsvectorTextOfBinary(tsvectorBinary(searchDocumentOf(text))))).toEqual(theirs.rows.map((row) => row.text));
    expect(tsvectorOfSearchText(texts[0])).toBe("'parse':1,3,5 'connection':2,4");
  });

  it('sends text and int4 arrays with NULLs, quotes, backslashes and characters beyond ASCII as they are', async () => {
    const texts = ['', 'plain', 'with "quotes", {braces} and \\ backslash', 'NULL', null, 'ünïcødé ✓ 𝒳'];
    const numbers = [0, -1, 2_147_483_647, -2_147_483_648, 42];
    const { rows } = await client.query<{ texts: Array<string | null>; numbers: number[] }>(
      'SELECT $1::text[] AS texts, $2::int[] AS numbers',
      [textArray(texts), int4Array(numbers)],
    );
    expect(rows[0]).toEqual({ texts, numbers });
  });
});
