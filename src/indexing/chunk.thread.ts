// The body of an indexing worker thread (chunk-pool.ts): chunks and embeds the files it is sent, one
// message at a time, so parsing and hashing never hold up the main thread's event loop.
import { parentPort } from 'node:worker_threads';
import { chunkAndEmbed, type ChunkEmbedSpec, type FileToChunk } from './chunk-embed';

export type ChunkTaskMessage = { id: number; files: FileToChunk[]; spec: ChunkEmbedSpec };
export type ChunkTaskReply =
  { id: number; chunks: Awaited<ReturnType<typeof chunkAndEmbed>> } | { id: number; error: { message: string; stack?: string } };

const port = parentPort;
if (port) {
  port.on('message', (message: ChunkTaskMessage) => {
    chunkAndEmbed(message.files, message.spec).then(
      (chunks) => port.postMessage({ id: message.id, chunks } satisfies ChunkTaskReply),
      (error: unknown) => {
        const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
        port.postMessage({ id: message.id, error: failure } satisfies ChunkTaskReply);
      },
    );
  });
}
