#!/bin/sh
# Runs the built service: `npm start`, `npm run start:api` and `npm run start:worker` come here
# (arguments such as --role=api pass through), and bench/startup.ts measures it the same way.
#
# glibc gives each thread that allocates while others do a malloc arena of its own and keeps what is
# freed there. In this process that is the main thread, the embedded database's thread, the chunking
# threads and V8's compiler threads: tens of MiB held while idle (docs/performance.md). Two arenas
# take the embedded default's idle RSS from about 295 to about 280 MiB. Set MALLOC_ARENA_MAX
# yourself to choose otherwise; it has to be in the environment before node starts, hence this file.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec node "$(dirname "$0")/../dist/src/main.js" "$@"
