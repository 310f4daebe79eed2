// node tests/server/bench-load.mjs URL [clients] [requests per client] [max_tokens]
// Drives any OpenAI-compatible server (URL ending in /v1) with streaming
// chat clients and prints one JSON line: requests, 429s, seconds, tokens,
// aggregate tok/s, TTFT p50 / p99 in ms.
import { runLoad } from './load_driver.mjs';

const [url, clients = '8', per = '50', maxTokens = '48'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node tests/server/bench-load.mjs http://127.0.0.1:8080/v1 [clients] [requests per client] [max_tokens]');
  process.exit(2);
}
// The client's default retries: cpp-httplib servers close a kept-alive
// connection after 5 requests, which a pooled client can race.
const r = await runLoad(url, { clients: Number(clients), perClient: Number(per), maxTokens: Number(maxTokens), maxRetries: 2 });
console.log(JSON.stringify(r));
