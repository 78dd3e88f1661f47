'use strict';
// Preloaded by `BENCH_PROFILE_HEAP=1 npm run bench:profile` (node --require) into the server
// under test: V8's sampling heap profiler, counting what was allocated whether or not it was
// collected since (node --heap-prof keeps only what is still alive: a request's garbage, the
// point here, would be missing). SIGWINCH starts a new window (after the warm-up); SIGUSR2
// writes the window's profile to HEAP_PROFILE_OUT.
const fs = require('node:fs');
const inspector = require('node:inspector');

const session = new inspector.Session();
session.connect();
const start = () =>
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
start();
process.on('SIGWINCH', () => session.post('HeapProfiler.stopSampling', () => start()));
process.on('SIGUSR2', () =>
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error) throw error;
    // Renamed into place: the reader waits for the name, and then finds the whole file.
    fs.writeFileSync(`${process.env.HEAP_PROFILE_OUT}.partial`, JSON.stringify(result.profile));
    fs.renameSync(`${process.env.HEAP_PROFILE_OUT}.partial`, process.env.HEAP_PROFILE_OUT);
  }),
);
