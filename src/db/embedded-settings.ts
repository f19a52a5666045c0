/** PGLITE_SHARED_BUFFERS_MB's default. */
export const DEFAULT_EMBEDDED_SHARED_BUFFERS_MB = 16;

/**
 * PostgreSQL's start parameters for the embedded database (PGlite's defaults plus these): the one
 * place for its memory settings. No PGlite import here: the main thread reads the default without loading it.
 *
 * PGlite runs PostgreSQL inside this process, in a WebAssembly memory that is touched in full at
 * start for the shared buffers: each MB of `shared_buffers` is a MiB of the service's RSS from
 * the first second (measured: 32 MB → 47 MiB of WebAssembly memory resident, 16 MB → 29 MiB,
 * 8 MB → 21 MiB). The data files are read through the operating system's page cache, which holds
 * them as well, so a buffer miss costs a read from memory, not from disk: a workload larger than
 * the buffers ran as fast on 8, 16 and 32 MB. The rest (work_mem, wal_buffers, which follows
 * shared_buffers) is only taken while a query needs it and stays at PostgreSQL's defaults.
 */
export function embeddedStartParams(defaultParams: readonly string[], sharedBuffersMb = DEFAULT_EMBEDDED_SHARED_BUFFERS_MB): string[] {
  return [...defaultParams, '-c', `shared_buffers=${sharedBuffersMb}MB`];
}
