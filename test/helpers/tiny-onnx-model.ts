import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import protobuf from 'protobufjs';
import { createRandom } from '../../src/random';

// The part of onnx.proto (github.com/onnx/onnx, onnx/onnx.proto) a small inference graph needs,
// with the upstream field numbers. Enums are plain int32 so proto3 needs no zero values.
const ONNX_PROTO = `
syntax = "proto3";
package onnx;
message AttributeProto { string name = 1; int64 i = 3; int32 type = 20; }
message NodeProto { repeated string input = 1; repeated string output = 2; string name = 3; string op_type = 4; repeated AttributeProto
attribute = 5; }
message TensorProto { repeated int64 dims = 1; int32 data_type = 2; string name = 8; bytes raw_data = 9; }
message TensorShapeProto { message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } } repeated Dimension dim = 1; }
message TypeProto { message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; } oneof value { Tensor tensor_type = 1; } }
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message GraphProto { repeated NodeProto node = 1; string name = 2; repeated TensorProto initializer = 5; repeated ValueInfoProto input = 11;
repeated ValueInfoProto output = 12; }
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message ModelProto { int64 ir_version = 1; string producer_name = 2; GraphProto graph = 7; repeated OperatorSetIdProto opset_import = 8; }
`;

const FLOAT = 1;
const INT64 = 7;
const ATTRIBUTE_INT = 2;

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
// Enough words for the tests to tell related texts from unrelated ones; the rest becomes [UNK].
const WORDS = [
  'the',
  'a',
  'how',
  'do',
  'we',
  'does',
  'is',
  'to',
  'of',
  'and',
  'in',
  'return',
  'function',
  'const',
  'class',
  'new',
  'import',
  'export',
  'from',
  'parse',
  'connection',
  'string',
  'url',
  'host',
  'port',
  'database',
  'open',
  'close',
  'query',
  'user',
  'users',
  'token',
  'login',
  'password',
  'image',
  'resize',
  'width',
  'height',
  'pixel',
  'color',
  'file',
  'read',
  'write',
  'error',
  'retry',
  'cache',
  'queue',
  'job',
  'worker',
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  '.',
  ',',
  ':',
  ';',
  '=',
  '?',
  '!',
  '"',
  "'",
  '/',
  '-',
  '_',
  '<',
  '>',
  '##s',
  '##ing',
  '##ed',
  '##er',
  '##connection',
  '##string',
  '##url',
];

export type TinyOnnxModelOptions = {
  /** Where to write the model directory (created if missing). */
  directory: string;
  /** Width of last_hidden_state. Default 16. */
  hiddenSize?: number;
  /** Seeds the weights: another seed gives another model.onnx. Default 1. */
  seed?: number;
};

/** Uniform noise in [-scale, scale], plus the identity when asked (a square matrix that keeps angles roughly). */
function floatTensor(options: { name: string; dims: [number, number]; next: () => number; scale?: number; identity?: boolean }) {
  const [rows, columns] = options.dims;
  const values = new Float32Array(rows * columns);
  for (let index = 0; index < values.length; index += 1) {
    const diagonal = options.identity && Math.floor(index / columns) === index % columns ? 1 : 0;
    values[index] = diagonal + (options.next() * 2 - 1) * (options.scale ?? 1);
  }
  return { name: options.name, dims: options.dims, data_type: FLOAT, raw_data: Buffer.from(values.buffer) };
}

const tensorInfo = (name: string, elemType: number, dims: Array<number | string>) => ({
  name,
  type: {
    tensor_type: {
      elem_type: elemType,
      shape: { dim: dims.map((dim) => (typeof dim === 'number' ? { dim_value: dim } : { dim_param: dim })) },
    },
  },
});

/**
 * A BERT-shaped encoder small enough to build in a test: word and token-type embeddings, one dense
 * projection, the attention mask applied, output `last_hidden_state` [batch, sequence, hidden].
 * No attention layers: mean pooling over it still gives texts that share words nearby vectors.
 */
function modelBytes(options: { vocabSize: number; hiddenSize: number; seed: number }): Uint8Array {
  const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
  const ModelProto = root.lookupType('onnx.ModelProto');
  const next = createRandom(options.seed);
  const hidden = options.hiddenSize;
  const graph = {
    name: 'tiny_bert',
    input: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => tensorInfo(name, INT64, ['batch_size', 'sequence_length'])),
    output: [tensorInfo('last_hidden_state', FLOAT, ['batch_size', 'sequence_length', hidden])],
    initializer: [
      floatTensor({ name: 'embeddings.word_embeddings.weight', dims: [options.vocabSize, hidden], next }),
      floatTensor({ name: 'embeddings.token_type_embeddings.weight', dims: [2, hidden], next, scale: 0.1 }),
      floatTensor({ name: 'dense.weight', dims: [hidden, hidden], next, scale: 0.2, identity: true }),
      { name: 'unsqueeze_axes', dims: [1], data_type: INT64, raw_data: Buffer.from(new BigInt64Array([-1n]).buffer) },
    ],
    node: [
      { op_type: 'Gather', name: 'word_embeddings', input: ['embeddings.word_embeddings.weight', 'input_ids'], output: ['words'] },
      {
        op_type: 'Gather',
        name: 'token_type_embeddings',
        input: ['embeddings.token_type_embeddings.weight', 'token_type_ids'],
        output: ['types'],
      },
      { op_type: 'Add', name: 'embeddings', input: ['words', 'types'], output: ['embedded'] },
      { op_type: 'MatMul', name: 'dense', input: ['embedded', 'dense.weight'], output: ['projected'] },
      {
        op_type: 'Cast',
        name: 'mask_to_float',
        input: ['attention_mask'],
        output: ['mask_float'],
        attribute: [{ name: 'to', type: ATTRIBUTE_INT, i: FLOAT }],
      },
      { op_type: 'Unsqueeze', name: 'mask_unsqueeze', input: ['mask_float', 'unsqueeze_axes'], output: ['mask'] },
      { op_type: 'Mul', name: 'apply_mask', input: ['projected', 'mask'], output: ['last_hidden_state'] },
    ],
  };
  const model = { ir_version: 8, producer_name: 'duo-slice-tests', opset_import: [{ domain: '', version: 14 }], graph };
  const problem = ModelProto.verify(model);
  if (problem) throw new Error(`tiny ONNX model: ${problem}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

function tokenizerJson(vocab: Record<string, number>) {
  const special = (token: string) => ({ SpecialToken: { id: token, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [
        special('[CLS]'),
        { Sequence: { id: 'A', type_id: 0 } },
        special('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [vocab[token]], tokens: [token] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/**
 * Writes a model directory the way Hugging Face exports lay one out for transformers.js:
 * config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx. Returns the directory.
 */
export async function writeTinyOnnxModel(options: TinyOnnxModelOptions): Promise<string> {
  const hiddenSize = options.hiddenSize ?? 16;
  const tokens = [...SPECIAL_TOKENS, ...WORDS];
  const vocab = Object.fromEntries(tokens.map((token, id) => [token, id]));
  await mkdir(path.join(options.directory, 'onnx'), { recursive: true });
  const json = (file: string, value: unknown) => writeFile(path.join(options.directory, file), `${JSON.stringify(value, null, 2)}\n`);
  await json('config.json', {
    model_type: 'bert',
    architectures: ['BertModel'],
    vocab_size: tokens.length,
    hidden_size: hiddenSize,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    intermediate_size: hiddenSize,
    max_position_embeddings: 128,
    type_vocab_size: 2,
    pad_token_id: 0,
  });
  await json('tokenizer.json', tokenizerJson(vocab));
  await json('tokenizer_config.json', {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: 128,
    clean_up_tokenization_spaces: true,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
  });
  await writeFile(
    path.join(options.directory, 'onnx', 'model.onnx'),
    modelBytes({ vocabSize: tokens.length, hiddenSize, seed: options.seed ?? 1 }),
  );
  return options.directory;
}
