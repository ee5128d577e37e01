#!/bin/sh
# rlboard collector launcher — what `npm run collector -- …` runs.
#
# 1. (Re)build collector/dist/collector.mjs when it is missing or older than
#    its sources (collector/build.ts --if-stale; a no-op check otherwise).
# 2. exec plain node on the bundle: same pid, signals and exit code go
#    straight to the daemon, and neither tsx nor esbuild is loaded in it.
#
# CPU: --single-threaded      V8 does its GC and JIT work on the main thread
#                              instead of helper threads, so a flooded collector
#                              takes about one core (1.01-1.02 with its file I/O
#                              threads), not 1.13-1.17, at the same throughput
#                              (bench/ingest.ts, 2026-12-06): it does not take a
#                              second core from the trainer beside it.
# Memory settings, chosen with bench/collector-rss.ts at 50 000 records/s
# (numbers in its header; none costs measurable CPU):
#   --max-semi-space-size=4    young generation ≤ 2 × 4 MB instead of 2 × 16 MB;
#   --heap-growing-percent=30  full GC when the old generation reaches 1.3 × its
#                              live size instead of up to 4 ×;
#   MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ (glibc): buffers ≥ 128 kB
#                              (request bodies and flush batches after a
#                              backlog) get their own mapping, returned on
#                              free, instead of fragmenting the malloc heap.
# None of them limits the heap: the per-stream buffer caps still decide.
set -e
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
(cd "$root" && node --import tsx collector/build.ts --if-stale)
export MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072
exec node --single-threaded --max-semi-space-size=4 --heap-growing-percent=30 "$root/collector/dist/collector.mjs" "$@"
