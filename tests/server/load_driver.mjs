// N streaming chat clients, each sending M requests back to back, against
// any OpenAI-compatible server: time to first token per request, tokens
// and wall time. Used by load.test.mjs (edgellm) and bench-load.mjs (any
// server, e.g. llama.cpp's llama-server, for BENCHMARKS.md).
import OpenAI from 'openai';

const TOPICS = ['a dragon', 'a cat', 'the sea', 'a red ball', 'a tree', 'the moon', 'a birthday', 'rain'];

// maxRetries: the client's own retries of connection errors and 429s (0
// in the tests, where each must be seen).
export async function runLoad(baseURL, { clients = 8, perClient = 50, maxTokens = 48, model = '', maxRetries = 0, onDone = async () => {} } = {}) {
  const client = new OpenAI({ baseURL, apiKey: 'x', maxRetries, timeout: 120000 });
  const ttft = [];
  let done = 0, refused = 0, tokens = 0;
  const t0 = Date.now();
  async function one(c, i) {
    const start = Date.now();
    try {
      // A topic per client and five variants of it: prefix reuse, slot
      // choice and eviction all get exercised.
      const messages = [{ role: 'user', content: `Tell me about ${TOPICS[c % TOPICS.length]} (${i % 5}).` }];
      const stream = await client.chat.completions.create({
        model, messages, max_tokens: maxTokens, temperature: 0.8, seed: c * 1000 + i, stream: true,
        stream_options: { include_usage: true },
      });
      let first = true;
      for await (const chunk of stream) {
        if (first && chunk.choices[0]?.delta?.content) { ttft.push(Date.now() - start); first = false; }
        if (chunk.usage) tokens += chunk.usage.completion_tokens;
      }
    } catch (e) {
      if (e.status === 429) refused++;
      else throw e;
    }
    done++;
    await onDone(done);
  }
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < perClient; i++) await one(c, i);
  }));
  const seconds = (Date.now() - t0) / 1000;
  ttft.sort((a, b) => a - b);
  const pct = (p) => ttft[Math.min(ttft.length - 1, Math.floor(p * ttft.length))];
  return { done, refused, seconds, tokens, tps: tokens / seconds, ttft_p50: pct(0.5), ttft_p99: pct(0.99) };
}
