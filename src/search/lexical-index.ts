/**
 * An exact BM25 index over one snapshot's chunks and files, built in memory from the chunks'
 * full-text documents (the identifier-split, damped terms the indexer stores in
 * code_chunks.search_text) and the snapshot's manifest. It answers the true top chunks and files
 * for a question, however common its words: every posting of every matching term is scored, where
 * a capped scan would rank only the first matches it met. See src/search/README.md.
 *
 * A snapshot never changes once written, so an index is built once per snapshot and kept
 * (lexical-search.ts).
 */
import type { LexicalRow } from '../db/code-chunks';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { identifierTerms } from '../llm/embedders/terms';

export type { LexicalRow };

/**
 * The version of serialize's bytes and of what goes into an index (its words, how a file's
 * frequencies are made): a stored index of another version is built again. Raise it with any change
 * to buildParts, pathWords or the serialisation.
 */
export const KEYWORD_INDEX_FORMAT = 1;

/** Where a chunk document of the index sits. */
export type LexicalDocument = {
  file: number;
  chunkId: string;
  startLine: number;
  endLine: number;
  symbol: string | null;
  language: string | null;
};

/** A query word with the lexemes it matches: exact words and stem prefixes, each with a weight (synonyms weigh less). */
export type QueryGroup = { forms: ReadonlyArray<{ lexeme: string; prefix: boolean; weight: number }> };

export type Scored = { id: number; score: number };

/** BM25's parameters: saturation of a term's frequency and how much a document's length counts. */
export type Bm25Parameters = { k1: number; b: number };

type Postings = { starts: Int32Array; ids: Int32Array; tfs: Float32Array };

/** tsvector text → [lexeme, number of positions] pairs, without allocating per position. */
export function parseTsvectorText(text: string, visit: (lexeme: string, count: number) => void): void {
  let index = 0;
  const length = text.length;
  while (index < length) {
    const open = text.indexOf("'", index);
    if (open === -1) return;
    // Lexemes of our documents are [a-z0-9] words; a quote inside one would be doubled ('').
    let close = open + 1;
    let lexeme = '';
    for (;;) {
      const next = text.indexOf("'", close);
      if (next === -1) return;
      if (text.charCodeAt(next + 1) === 39) {
        lexeme += text.slice(close, next + 1);
        close = next + 2;
        continue;
      }
      lexeme += text.slice(close, next);
      close = next;
      break;
    }
    index = close + 1;
    let count = 1;
    if (text.charCodeAt(index) === 58 /* : */) {
      while (index < length && text.charCodeAt(index) !== 32 /* space */) {
        if (text.charCodeAt(index) === 44 /* , */) count += 1;
        index += 1;
      }
    }
    visit(lexeme, count);
  }
}

/** Words of a path as the full-text document holds them: identifier parts (a joined identifier is its parts there). */
export function pathWords(path: string): string[] {
  return identifierTerms(path).filter((term) => !term.includes('_'));
}

/** A growable list of int32 triples (term, id, frequency), sorted into postings by term at the end. */
class TripleBuffer {
  terms = new Int32Array(1024);
  ids = new Int32Array(1024);
  tfs = new Float32Array(1024);
  length = 0;

  push(term: number, id: number, tf: number): void {
    if (this.length === this.terms.length) {
      const grow = <T extends Int32Array | Float32Array>(array: T): T => {
        const bigger = new (array.constructor as { new (length: number): T })(array.length * 2);
        bigger.set(array);
        return bigger;
      };
      this.terms = grow(this.terms);
      this.ids = grow(this.ids);
      this.tfs = grow(this.tfs);
    }
    this.terms[this.length] = term;
    this.ids[this.length] = id;
    this.tfs[this.length] = tf;
    this.length += 1;
  }

  /** Postings by term number (0 … termCount - 1), ids ascending within a term as they were pushed. */
  toPostings(termCount: number): Postings {
    const starts = new Int32Array(termCount + 1);
    for (let index = 0; index < this.length; index += 1) starts[this.terms[index] + 1] += 1;
    for (let term = 0; term < termCount; term += 1) starts[term + 1] += starts[term];
    const next = starts.slice(0, termCount);
    const ids = new Int32Array(this.length);
    const tfs = new Float32Array(this.length);
    for (let index = 0; index < this.length; index += 1) {
      const at = next[this.terms[index]]++;
      ids[at] = this.ids[index];
      tfs[at] = this.tfs[index];
    }
    return { starts, ids, tfs };
  }
}

/** A chunk's document as term numbers and their frequencies. */
type ParsedDocument = { terms: Int32Array; counts: Uint16Array; length: number };

export class LexicalIndex {
  readonly files: ReadonlyArray<{ path: string; blob: string; role: string | null }>;
  readonly documents: readonly LexicalDocument[];
  /** Every lexeme by term number. */
  private readonly lexemes: readonly string[];
  /** Term numbers in lexeme order (code unit order), so a prefix is a range. */
  private readonly sortedTerms: Int32Array;
  private readonly chunkPostings: Postings;
  private readonly filePostings: Postings;
  private readonly documentLengths: Float32Array;
  private readonly fileLengths: Float32Array;
  private readonly documentFiles: Int32Array;
  private readonly averageDocumentLength: number;
  private readonly averageFileLength: number;
  /** Rough bytes held, for the cache's bound. */
  readonly weight: number;

  /** Builds the index of a snapshot's rows (snapshotLexicalRows), or takes one restored by deserialize. */
  constructor(source: readonly LexicalRow[] | IndexParts) {
    const parts = Array.isArray(source) ? buildParts(source as readonly LexicalRow[]) : (source as IndexParts);
    this.files = parts.files;
    this.documents = parts.documents;
    this.lexemes = parts.lexemes;
    this.sortedTerms = parts.sortedTerms;
    this.chunkPostings = parts.chunkPostings;
    this.filePostings = parts.filePostings;
    this.documentLengths = parts.documentLengths;
    this.documentFiles = parts.documentFiles;
    this.fileLengths = parts.fileLengths;
    this.averageDocumentLength = average(this.documentLengths);
    this.averageFileLength = average(this.fileLengths);
    let lexemeChars = 0;
    for (const lexeme of this.lexemes) lexemeChars += lexeme.length;
    this.weight =
      2 * lexemeChars +
      64 * this.lexemes.length +
      8 * (this.chunkPostings.ids.length + this.filePostings.ids.length) +
      140 * this.documents.length +
      100 * this.files.length;
    this.scratch = {
      frequency: new Float64Array(this.documents.length),
      scores: new Float64Array(this.documents.length),
      seen: new Uint8Array(this.documents.length),
    };
  }

  /**
   * The index as bytes (deflated), for code_snapshot_keyword_indexes: strings as one JSON text,
   * the typed arrays as they are. `deserialize` gives back an index that scores exactly as this one.
   */
  serialize(): Buffer {
    const strings = JSON.stringify({
      files: this.files.map((file) => [file.path, file.blob, file.role]),
      documents: this.documents.map((document) => [document.chunkId, document.symbol, document.language]),
      lexemes: this.lexemes,
    });
    const arrays: Array<Int32Array | Float32Array> = [
      this.sortedTerms,
      this.chunkPostings.starts,
      this.chunkPostings.ids,
      this.chunkPostings.tfs,
      this.filePostings.starts,
      this.filePostings.ids,
      this.filePostings.tfs,
      this.documentLengths,
      this.documentFiles,
      this.fileLengths,
      Int32Array.from(this.documents, (document) => document.startLine),
      Int32Array.from(this.documents, (document) => document.endLine),
    ];
    const text = Buffer.from(strings, 'utf8');
    const header = Buffer.alloc(4 * (2 + arrays.length));
    header.writeUInt32LE(text.length, 0);
    header.writeUInt32LE(arrays.length, 4);
    arrays.forEach((array, index) => header.writeUInt32LE(array.length, 8 + 4 * index));
    const pad = Buffer.alloc((4 - (text.length % 4)) % 4);
    return deflateRawSync(
      Buffer.concat([header, text, pad, ...arrays.map((array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength))]),
      { level: 1 },
    );
  }

  /** An index from serialize's bytes. */
  static deserialize(bytes: Uint8Array): LexicalIndex {
    const raw = inflateRawSync(bytes);
    const textLength = raw.readUInt32LE(0);
    const count = raw.readUInt32LE(4);
    if (count !== 12) throw new Error(`a keyword index of ${count} arrays, not 12`);
    const lengths = Array.from({ length: count }, (_, index) => raw.readUInt32LE(8 + 4 * index));
    let offset = 8 + 4 * count;
    const strings = JSON.parse(raw.toString('utf8', offset, offset + textLength)) as {
      files: Array<[string, string, string | null]>;
      documents: Array<[string, string | null, string | null]>;
      lexemes: string[];
    };
    offset += textLength + ((4 - (textLength % 4)) % 4);
    // Views on the inflated bytes where they are aligned for 4-byte numbers (they are when the buffer is:
    // the header and the padded text keep every array on a multiple of 4), else copies.
    let array = 0;
    const slice = <T>(make: (buffer: ArrayBuffer, byteOffset: number, length: number) => T): T => {
      const length = lengths[array++];
      const at = raw.byteOffset + offset;
      offset += length * 4;
      return at % 4 === 0 ? make(raw.buffer, at, length) : make(raw.buffer.slice(at, at + length * 4), 0, length);
    };
    const ints = () => slice((buffer, byteOffset, length) => new Int32Array(buffer, byteOffset, length));
    const floats = () => slice((buffer, byteOffset, length) => new Float32Array(buffer, byteOffset, length));
    const sortedTerms = ints();
    const chunkPostings = { starts: ints(), ids: ints(), tfs: floats() };
    const filePostings = { starts: ints(), ids: ints(), tfs: floats() };
    const documentLengths = floats();
    const documentFiles = ints();
    const fileLengths = floats();
    const starts = ints();
    const ends = ints();
    if (offset !== raw.length || documentFiles.length !== strings.documents.length) throw new Error('a keyword index of the wrong size');
    return new LexicalIndex({
      files: strings.files.map(([path, blob, role]) => ({ path, blob, role })),
      documents: strings.documents.map(([chunkId, symbol, language], id) => ({
        file: documentFiles[id],
        chunkId,
        startLine: starts[id],
        endLine: ends[id],
        symbol,
        language,
      })),
      lexemes: strings.lexemes,
      sortedTerms,
      chunkPostings,
      filePostings,
      documentLengths,
      documentFiles,
      fileLengths,
    });
  }

  /** Buffers score() reuses (it is synchronous, so calls never overlap), sized for the chunk level. */
  private readonly scratch: { frequency: Float64Array; scores: Float64Array; seen: Uint8Array };

  get size(): { files: number; documents: number; lexemes: number } {
    return { files: this.files.length, documents: this.documents.length, lexemes: this.lexemes.length };
  }

  /** The file of a chunk document. */
  fileOf(document: number): number {
    return this.documentFiles[document];
  }

  /** The term numbers a form matches: one exact lexeme, or every lexeme starting with a prefix. */
  private termsOf(form: { lexeme: string; prefix: boolean }): number[] {
    const sorted = this.sortedTerms;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.lexemes[sorted[middle]] < form.lexeme) low = middle + 1;
      else high = middle;
    }
    const terms: number[] = [];
    for (let at = low; at < sorted.length; at += 1) {
      const lexeme = this.lexemes[sorted[at]];
      if (form.prefix ? !lexeme.startsWith(form.lexeme) : lexeme !== form.lexeme) break;
      terms.push(sorted[at]);
      if (!form.prefix) break;
    }
    return terms;
  }

  /**
   * BM25 scores of the chunk documents (`level: 'chunk'`) or files (`'file'`) for query groups:
   * each group is one word of the question, its frequency in a document the weighted sum of its
   * forms' frequencies, its idf from the documents holding any form. `accepted` (by file) leaves
   * documents out (another directory, an excluded file). Answers the best `limit`, best first,
   * ties by id (path and line order).
   */
  score(options: {
    groups: readonly QueryGroup[];
    level: 'chunk' | 'file';
    parameters: Bm25Parameters;
    accepted?: Uint8Array;
    limit: number;
    /** Chunk level: answer each file's best chunk only (at most `limit` of them, best first). */
    bestPerFile?: boolean;
  }): Scored[] {
    const { groups, level, parameters, accepted } = options;
    const chunks = level === 'chunk';
    const postings = chunks ? this.chunkPostings : this.filePostings;
    const lengths = chunks ? this.documentLengths : this.fileLengths;
    const averageLength = Math.max(1, chunks ? this.averageDocumentLength : this.averageFileLength);
    const total = lengths.length;
    const { frequency, scores, seen } = this.scratch;
    const touched: number[] = [];
    const inGroup: number[] = [];
    const { k1, b } = parameters;
    for (const group of groups) {
      inGroup.length = 0;
      for (const form of group.forms) {
        for (const term of this.termsOf(form)) {
          for (let at = postings.starts[term]; at < postings.starts[term + 1]; at += 1) {
            const id = postings.ids[at];
            if (frequency[id] === 0) inGroup.push(id);
            frequency[id] += form.weight * postings.tfs[at];
          }
        }
      }
      if (!inGroup.length) continue;
      const idf = Math.log(1 + (total - inGroup.length + 0.5) / (inGroup.length + 0.5));
      for (const id of inGroup) {
        const tf = frequency[id];
        frequency[id] = 0;
        if (accepted && !accepted[chunks ? this.documentFiles[id] : id]) continue;
        scores[id] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[id]) / averageLength));
        if (!seen[id]) {
          seen[id] = 1;
          touched.push(id);
        }
      }
    }
    let candidates = touched;
    if (options.bestPerFile && chunks) {
      const bestOfFile = new Map<number, number>();
      for (const id of touched) {
        const file = this.documentFiles[id];
        const best = bestOfFile.get(file);
        if (best === undefined || scores[id] > scores[best] || (scores[id] === scores[best] && id < best)) bestOfFile.set(file, id);
      }
      candidates = [...bestOfFile.values()];
    }
    const best = selectBest(candidates, scores, options.limit);
    for (const id of touched) {
      scores[id] = 0;
      seen[id] = 0;
    }
    return best;
  }
  private pathIds: Map<string, number> | undefined;

  /** A file's number in `files`, or undefined for a path the snapshot does not hold. */
  fileId(path: string): number | undefined {
    this.pathIds ??= new Map(this.files.map((file, id) => [file.path, id]));
    return this.pathIds.get(path);
  }

  /**
   * How much of the question each file holds: the idf-weighted share of the query groups with at
   * least one form in the file (coordination, which BM25's sum leaves to one frequent word). One
   * share per file asked for, 0 for a file of none of the words.
   */
  fileCoverage(groups: readonly QueryGroup[], fileIds: readonly number[]): number[] {
    const wanted = new Map<number, number>();
    fileIds.forEach((id, index) => wanted.set(id, index));
    const covered = new Float64Array(fileIds.length);
    const postings = this.filePostings;
    const total = this.fileLengths.length;
    let idfSum = 0;
    const marks = new Uint8Array(fileIds.length);
    const held = new Uint8Array(total);
    const holders: number[] = [];
    for (const group of groups) {
      marks.fill(0);
      for (const id of holders) held[id] = 0;
      holders.length = 0;
      // The word itself, not its synonyms: a file holds the question's word or it does not.
      for (const form of group.forms) {
        if (form.weight < 1) continue;
        for (const term of this.termsOf(form)) {
          for (let at = postings.starts[term]; at < postings.starts[term + 1]; at += 1) {
            const id = postings.ids[at];
            if (!held[id]) {
              held[id] = 1;
              holders.push(id);
            }
            const index = wanted.get(id);
            if (index !== undefined) marks[index] = 1;
          }
        }
      }
      if (!holders.length) continue;
      const idf = Math.log(1 + (total - holders.length + 0.5) / (holders.length + 0.5));
      idfSum += idf;
      for (let index = 0; index < marks.length; index += 1) if (marks[index]) covered[index] += idf;
    }
    return Array.from(covered, (value) => (idfSum > 0 ? value / idfSum : 0));
  }
}

/** What an index is made of, built from rows or restored from bytes. */
type IndexParts = {
  files: ReadonlyArray<{ path: string; blob: string; role: string | null }>;
  documents: readonly LexicalDocument[];
  lexemes: readonly string[];
  sortedTerms: Int32Array;
  chunkPostings: Postings;
  filePostings: Postings;
  documentLengths: Float32Array;
  documentFiles: Int32Array;
  fileLengths: Float32Array;
};

function buildParts(rows: readonly LexicalRow[]): IndexParts {
  const files: Array<{ path: string; blob: string; role: string | null }> = [];
  const documents: LexicalDocument[] = [];
  const numbers = new Map<string, number>();
  const lexemes: string[] = [];
  const termOf = (lexeme: string) => {
    let number = numbers.get(lexeme);
    if (number === undefined) {
      number = lexemes.length;
      numbers.set(lexeme, number);
      lexemes.push(lexeme);
    }
    return number;
  };
  const parsed = new Map<string, ParsedDocument>();
  const parse = (text: string): ParsedDocument => {
    const terms: number[] = [];
    const counts: number[] = [];
    let length = 0;
    parseTsvectorText(text, (lexeme, count) => {
      terms.push(termOf(lexeme));
      counts.push(count);
      length += count;
    });
    return { terms: Int32Array.from(terms), counts: Uint16Array.from(counts), length };
  };
  const chunkTriples = new TripleBuffer();
  const fileTriples = new TripleBuffer();
  const documentLengths: number[] = [];
  const documentFiles: number[] = [];
  const fileLengths: number[] = [];
  let fileFrequency = new Float64Array(1024);
  const fileTouched: number[] = [];
  let fileChunks = 0;
  let filePathTerms = new Set<number>();
  const closeFile = () => {
    if (!files.length) return;
    const id = files.length - 1;
    let length = 0;
    fileTouched.sort((a, b) => a - b);
    for (const term of fileTouched) {
      const summed = fileFrequency[term];
      fileFrequency[term] = 0;
      // Every chunk's document repeats the path's words: a file holds them once.
      const tf = filePathTerms.has(term) ? Math.max(1, summed - (fileChunks - 1)) : summed;
      fileTriples.push(term, id, tf);
      length += tf;
    }
    fileTouched.length = 0;
    fileLengths.push(length);
  };
  for (const row of rows) {
    if (!files.length || files[files.length - 1].path !== row.path) {
      closeFile();
      files.push({ path: row.path, blob: row.blob, role: row.role });
      fileChunks = 0;
      filePathTerms = new Set(pathWords(row.path).map(termOf));
    }
    let document = parsed.get(row.chunkId);
    if (!document) {
      document = parse(row.terms);
      parsed.set(row.chunkId, document);
    }
    const id = documents.length;
    documents.push({
      file: files.length - 1,
      chunkId: row.chunkId,
      startLine: row.startLine,
      endLine: row.endLine,
      symbol: row.symbol,
      language: row.language,
    });
    if (lexemes.length > fileFrequency.length) {
      const bigger = new Float64Array(Math.max(lexemes.length, fileFrequency.length * 2));
      bigger.set(fileFrequency);
      fileFrequency = bigger;
    }
    for (let index = 0; index < document.terms.length; index += 1) {
      const term = document.terms[index];
      const count = document.counts[index];
      chunkTriples.push(term, id, count);
      if (fileFrequency[term] === 0) fileTouched.push(term);
      fileFrequency[term] += count;
    }
    documentLengths.push(document.length);
    documentFiles.push(files.length - 1);
    fileChunks += 1;
  }
  closeFile();
  return {
    files,
    documents,
    lexemes,
    sortedTerms: Int32Array.from(lexemes.keys()).sort((a, b) => (lexemes[a] < lexemes[b] ? -1 : lexemes[a] > lexemes[b] ? 1 : 0)),
    chunkPostings: chunkTriples.toPostings(lexemes.length),
    filePostings: fileTriples.toPostings(lexemes.length),
    documentLengths: Float32Array.from(documentLengths),
    documentFiles: Int32Array.from(documentFiles),
    fileLengths: Float32Array.from(fileLengths),
  };
}

/** The `limit` ids of the highest scores, best first, ties by the lower id: a bounded heap, not a sort of them all. */
function selectBest(ids: readonly number[], scores: Float64Array, limit: number): Scored[] {
  // A min-heap of the best so far: the root is the worst of them.
  const heap: number[] = [];
  const worse = (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && a > b);
  const siftDown = (start: number) => {
    let at = start;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let smallest = at;
      if (left < heap.length && worse(heap[left], heap[smallest])) smallest = left;
      if (right < heap.length && worse(heap[right], heap[smallest])) smallest = right;
      if (smallest === at) return;
      [heap[at], heap[smallest]] = [heap[smallest], heap[at]];
      at = smallest;
    }
  };
  for (const id of ids) {
    if (heap.length < limit) {
      heap.push(id);
      let at = heap.length - 1;
      while (at > 0) {
        const parent = (at - 1) >>> 1;
        if (!worse(heap[at], heap[parent])) break;
        [heap[at], heap[parent]] = [heap[parent], heap[at]];
        at = parent;
      }
    } else if (limit > 0 && worse(heap[0], id)) {
      heap[0] = id;
      siftDown(0);
    }
  }
  return heap.map((id) => ({ id, score: scores[id] })).sort((a, b) => b.score - a.score || a.id - b.id);
}

function average(values: Float32Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return values.length ? sum / values.length : 0;
}
