// Jest runs each test file in its own V8 context, with its own Float32Array and friends.
// onnxruntime-node's native binding makes output tensors from the main context's typed arrays,
// and onnxruntime-common (loaded inside the test context) then refuses them with "A float32
// tensor's data must be type of Float32Array". Test files that run an ONNX model use this
// environment (docblock: @jest-environment ./test/helpers/onnx-test-environment.js), which hands
// the context the main context's typed-array constructors, as plain Node has them.
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class OnnxTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = OnnxTestEnvironment;
