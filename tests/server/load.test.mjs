// Load: 8 concurrent streaming clients x 50 requests on stories260K with
// --parallel 4 --queue 8. Every request completes or gets a 429, none
// hangs, and RSS grows by less than 8 MiB from request 50 to request 400
// (not under the sanitizers, whose allocator keeps freed memory on purpose).
// Prints p50 / p99 time to first token and the throughput (BENCHMARKS.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLoad } from './load_driver.mjs';
import { MODELS, SANITIZED, startServer, metrics } from './harness.mjs';

const CLIENTS = 8, PER_CLIENT = 50, MAX_TOKENS = 48;

test('8 streaming clients x 50 requests, --parallel 4 --queue 8', async () => {
  const srv = await startServer(MODELS[0], ['--parallel', '4', '--queue', '8', '-c', '512', ...(process.env.EDGELLM_LOAD_ARGS || '').split(' ').filter(Boolean)]);
  try {
    const rss = {};
    const r = await runLoad(`${srv.url}/v1`, {
      clients: CLIENTS, perClient: PER_CLIENT, maxTokens: MAX_TOKENS,
      onDone: async (done) => {
        if (done === 50 || done === CLIENTS * PER_CLIENT) rss[done] = (await metrics(srv.url)).edgellm_process_resident_memory_bytes;
      },
    });
    const done = r.done;
    assert.equal(done, CLIENTS * PER_CLIENT);
    const m = await metrics(srv.url);
    console.log(`# load: ${done} requests (${r.refused} refused with 429) in ${r.seconds.toFixed(1)} s; ` +
      `TTFT p50 ${r.ttft_p50} ms p99 ${r.ttft_p99} ms; ${r.tokens} tokens, ${r.tps.toFixed(1)} tok/s aggregate; ` +
      `RSS at 50 ${(rss[50] / 2 ** 20).toFixed(1)} MiB, at ${done} ${(rss[done] / 2 ** 20).toFixed(1)} MiB; ` +
      `cached prompt tokens ${m.edgellm_prompt_tokens_cached_total} of ${m.edgellm_prompt_tokens_total}`);
    assert.equal(m.edgellm_slots_busy, 0);
    assert.equal(m.edgellm_queue_depth, 0);
    if (!SANITIZED) assert.ok(rss[done] - rss[50] < 8 * 2 ** 20, `RSS grew ${(rss[done] - rss[50]) / 2 ** 20} MiB`);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
