/**
 * PostgreSQL's binary forms of the values an index run writes (arrays of text, int4, pgvector's
 * `vector` and `tsvector`), as `pg` sends a Buffer parameter (format 1). The server then reads
 * each value with the type's receive function (array_recv, vector_recv, tsvectorrecv) instead of
 * parsing text: no array literal to scan, no decimal number to convert per vector element, no
 * tsvector text to parse; and this process no longer prints numbers or escapes array literals.
 * The stored values are the ones the text forms gave (see float32Of and tsvectorBinary).
 *
 * No imports: the chunk threads (src/indexing/chunk-embed.ts) make the vector and tsvector forms.
 */

/** Element types of the arrays written (pg_type oids, fixed in PostgreSQL); pgvector's `vector` is looked up per database. */
export const TEXT_TYPE = 25;
export const INT4_TYPE = 23;
export const TSVECTOR_TYPE = 3614;

/** A one-dimensional array of already encoded elements (null for SQL NULL), as array_recv reads it. */
export function binaryArray(elementType: number, elements: ReadonlyArray<Uint8Array | null>): Buffer {
  let size = 20;
  for (const element of elements) size += 4 + (element?.length ?? 0);
  const buffer = arrayHeader(elementType, elements.length, elements.includes(null), size);
  let offset = 20;
  for (const element of elements) {
    offset = buffer.writeInt32BE(element ? element.length : -1, offset);
    if (!element) continue;
    buffer.set(element, offset);
    offset += element.length;
  }
  return buffer;
}

/** A text[] (UTF-8, as the text form would send it; null for SQL NULL), each string written straight into the array. */
export function textArray(values: ReadonlyArray<string | null>): Buffer {
  const lengths = values.map((value) => (value === null ? -1 : Buffer.byteLength(value, 'utf8')));
  const size = lengths.reduce((sum, length) => sum + 4 + Math.max(length, 0), 20);
  const buffer = arrayHeader(TEXT_TYPE, values.length, lengths.includes(-1), size);
  let offset = 20;
  values.forEach((value, index) => {
    offset = buffer.writeInt32BE(lengths[index], offset);
    if (value) offset += buffer.write(value, offset, 'utf8');
  });
  return buffer;
}

/** An int4[]. */
export function int4Array(values: readonly number[]): Buffer {
  const buffer = arrayHeader(INT4_TYPE, values.length, false, 20 + 8 * values.length);
  let offset = 20;
  for (const value of values) offset = buffer.writeInt32BE(value, buffer.writeInt32BE(4, offset));
  return buffer;
}

/** A buffer of `size` bytes starting with array_recv's header of a one-dimensional array. */
function arrayHeader(elementType: number, length: number, hasNull: boolean, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNull ? 1 : 0, 4);
  buffer.writeUInt32BE(elementType, 8);
  buffer.writeInt32BE(length, 12);
  buffer.writeInt32BE(1, 16);
  return buffer;
}

const VECTOR_HEADER_BYTES = 4;

/**
 * A vector in vector_recv's form: dimensions (int16), a zero int16, then each element as a
 * big-endian float4, rounded as pgvector's text input rounds the number JavaScript prints for it
 * (float32Of), so the stored vector is the one `[0.1,-0.2,...]` gave. With `scale`, the elements
 * are `values[i] * scale` (the lexical embedder hands its vector unnormalised, with the factor).
 */
export function vectorBinary(values: ArrayLike<number>, scale = 1): Uint8Array {
  const bytes = new Uint8Array(VECTOR_HEADER_BYTES + 4 * values.length);
  const view = new DataView(bytes.buffer);
  view.setInt16(0, values.length);
  view.setInt16(2, 0);
  for (let index = 0; index < values.length; index += 1) view.setFloat32(VECTOR_HEADER_BYTES + 4 * index, float32Of(values[index] * scale));
  return bytes;
}

/** The numbers of a vectorBinary (single precision, as stored). */
export function vectorOfBinary(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values: number[] = [];
  for (let offset = VECTOR_HEADER_BYTES; offset < bytes.byteLength; offset += 4) values.push(view.getFloat32(offset));
  return values;
}

/** A vectorBinary in pgvector's text form (each float4 printed exactly enough to read it back). */
export function vectorTextOfBinary(bytes: Uint8Array): string {
  return `[${vectorOfBinary(bytes).join(',')}]`;
}

/**
 * The single-precision number pgvector's vector_in stores for `String(value)`: it reads the
 * decimal with strtof, which rounds that decimal to the nearest float. Math.fround rounds the
 * double instead; the two agree except when the double lies exactly halfway between two floats,
 * where the printed decimal (the shortest that reads back as the double) can lie a hair to either
 * side of it, and strtof follows the decimal rather than rounding the tie to even. And -0 is printed,
 * so stored, as 0.
 */
export function float32Of(value: number): number {
  // JavaScript prints -0 as 0.
  if (value === 0) return 0;
  const rounded = Math.fround(value);
  if (rounded === value || !Number.isFinite(rounded)) return rounded;
  // Exact in double precision; a float only when `value` is halfway between `rounded` and it.
  const other = 2 * value - rounded;
  if (Math.fround(other) !== other) return rounded;
  const side = compareDecimalToDouble(String(value), value);
  if (side === 0) return rounded;
  return side > 0 ? Math.max(rounded, other) : Math.min(rounded, other);
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/;
const doubleBits = new DataView(new ArrayBuffer(8));

/** The sign of (decimal − value), exactly; `decimal` is how JavaScript prints a finite number. */
function compareDecimalToDouble(decimal: string, value: number): number {
  const match = DECIMAL.exec(decimal);
  if (!match) throw new Error(`unexpected number text ${decimal}`);
  const [, minus, whole, fraction = '', exponent = '0'] = match;
  // |decimal| = digits × 10^power10; |value| = mantissa × 2^power2.
  let digits = BigInt(whole + fraction);
  const power10 = Number(exponent) - fraction.length;
  doubleBits.setFloat64(0, Math.abs(value));
  const high = doubleBits.getUint32(0);
  const biased = high >>> 20;
  let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(doubleBits.getUint32(4));
  if (biased) mantissa |= 1n << 52n;
  const power2 = (biased || 1) - 1075;
  if (power10 >= 0) digits *= 10n ** BigInt(power10);
  else mantissa *= 10n ** BigInt(-power10);
  if (power2 >= 0) mantissa <<= BigInt(power2);
  else digits <<= BigInt(-power2);
  const magnitude = digits === mantissa ? 0 : digits > mantissa ? 1 : -1;
  return minus ? -magnitude : magnitude;
}

/**
 * A tsvector in tsvectorrecv's form: the number of lexemes (int32), then each lexeme as a
 * NUL-terminated string, its number of positions (uint16) and its positions (uint16, weight D).
 * `document` maps each lexeme to its positions, ascending, within tsvector's limits. Lexemes go in
 * the order tsvector's text input stores them (by their bytes, a prefix first), so the stored value
 * is laid out as the text form's was.
 */
export function tsvectorBinary(document: ReadonlyMap<string, readonly number[]>): Uint8Array {
  const lexemes = [...document.keys()];
  let ascii = true;
  let size = 4;
  for (const lexeme of lexemes) {
    if (ascii && !ASCII.test(lexeme)) ascii = false;
    size += lexeme.length + 3 + 2 * document.get(lexeme)!.length;
  }
  if (!ascii) return tsvectorBinaryOfBytes(document);
  // For ASCII, JavaScript's string order is the bytes' order.
  lexemes.sort();
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, lexemes.length);
  let offset = 4;
  for (const lexeme of lexemes) {
    for (let index = 0; index < lexeme.length; index += 1) bytes[offset++] = lexeme.charCodeAt(index);
    bytes[offset++] = 0;
    const positions = document.get(lexeme)!;
    view.setUint16(offset, positions.length);
    offset += 2;
    for (const position of positions) {
      view.setUint16(offset, position);
      offset += 2;
    }
  }
  return bytes;
}

const ASCII = /^[\x00-\x7f]*$/;

/** tsvectorBinary for lexemes beyond ASCII: ordered by their UTF-8 bytes (memcmp, then the shorter first). */
function tsvectorBinaryOfBytes(document: ReadonlyMap<string, readonly number[]>): Uint8Array {
  const entries = [...document].map(([lexeme, positions]) => ({ lexeme: Buffer.from(lexeme, 'utf8'), positions }));
  entries.sort((a, b) => Buffer.compare(a.lexeme, b.lexeme));
  const size = entries.reduce((sum, entry) => sum + entry.lexeme.length + 3 + 2 * entry.positions.length, 4);
  // Not from Buffer's shared pool: the value crosses from a chunk thread, and a view would take the whole pool with it.
  const bytes = Buffer.allocUnsafeSlow(size);
  bytes.writeInt32BE(entries.length, 0);
  let offset = 4;
  for (const { lexeme, positions } of entries) {
    bytes.set(lexeme, offset);
    bytes[offset + lexeme.length] = 0;
    offset = bytes.writeUInt16BE(positions.length, offset + lexeme.length + 1);
    for (const position of positions) offset = bytes.writeUInt16BE(position, offset);
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A tsvectorBinary in tsvector's text form (`'parse':1,3 'connection':2`), for a client that can only send text. */
export function tsvectorTextOfBinary(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = buffer.readInt32BE(0);
  const entries: string[] = [];
  let offset = 4;
  for (let entry = 0; entry < count; entry += 1) {
    const end = buffer.indexOf(0, offset);
    const lexeme = buffer.toString('utf8', offset, end).replace(/['\\]/g, (character) => `${character}${character}`);
    const positionCount = buffer.readUInt16BE(end + 1);
    offset = end + 3;
    const positions: number[] = [];
    for (let position = 0; position < positionCount; position += 1, offset += 2) positions.push(buffer.readUInt16BE(offset) & 0x3fff);
    entries.push(positions.length ? `'${lexeme}':${positions.join(',')}` : `'${lexeme}'`);
  }
  return entries.join(' ');
}
