// Preloaded with `node --require` by the CLI benchmarks: at exit, writes the process's own
// peak RSS and CPU time to DELEGATE_BENCH_USAGE_FILE (exact figures, no sampling).
const { writeFileSync } = require('node:fs');

const file = process.env.DELEGATE_BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({
        maxRssKb: usage.maxRSS,
        cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      }),
    );
  });
}
