import { createRequire } from 'node:module';
import path from 'node:path';
import { Parser } from 'web-tree-sitter';
import { PROJECT_ROOT } from '../paths';

// Resolving from the project root, not from this file, finds the same packages from src/ (swc, jest) and dist/src/ (tsc).
const requireFromRoot = createRequire(path.join(PROJECT_ROOT, 'package.json'));

/** Absolute path of a file in the root of an installed package (one without an `exports` map, as the grammar packages are). */
export function packageFilePath(packageName: string, file: string): string {
  return path.join(path.dirname(requireFromRoot.resolve(`${packageName}/package.json`)), file);
}

// The project's TypeScript lib has no DOM, where WebAssembly is declared; this is the little we use of it.
type WasmMemory = { readonly buffer: ArrayBuffer };
type WasmMemoryConstructor = new (descriptor: { initial: number; maximum: number }) => WasmMemory;
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: WasmMemoryConstructor } }).WebAssembly;

let wasmMemory: WasmMemory | undefined;
let initializing: Promise<void> | undefined;
let inits = 0;

/** Initialises web-tree-sitter once per process, on first use; concurrent and later callers share the first call. */
export function initTreeSitter(): Promise<void> {
  // The memory web-tree-sitter would create itself (32 MiB, growable to 2 GiB, in 64 KiB pages). Handing it over lets
  // wasmHeapBytes() read its size: trees and parsers live there and are freed only by delete(), never by the GC in time.
  wasmMemory ??= new Memory({ initial: 512, maximum: 32768 });
  initializing ??= Parser.init({
    wasmMemory,
    locateFile: (file: string) => requireFromRoot.resolve(`web-tree-sitter/${file}`),
  })
    .then(() => {
      inits += 1;
    })
    .catch((error: unknown) => {
      initializing = undefined;
      throw error;
    });
  return initializing;
}

/** How many times web-tree-sitter was initialised (1 once anything parsed). */
export function runtimeInitCount(): number {
  return inits;
}

/** Bytes of WASM memory web-tree-sitter holds (0 before first use); it grows when trees are not freed and never shrinks. */
export function wasmHeapBytes(): number {
  return wasmMemory?.buffer.byteLength ?? 0;
}
