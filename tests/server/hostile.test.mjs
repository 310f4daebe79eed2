// Hostile requests against `edgellm serve`: malformed JSON, wrong types,
// absurd numbers, oversized bodies and conversations, missing or wrong keys
// on every route, invalid UTF-8 and slowloris-style partial requests. Each
// gets a 4xx in OpenAI's error shape or a closed connection within the read
// timeout, and the server keeps answering correctly afterwards (under
// ASan+UBSan too: scripts/test.sh asan runs this against that build).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { MODELS, startServer, cli } from './harness.mjs';

const KEY = 'hostile-key';
const PROMPT = 'Once upon a time';
let count = 0;  // hostile requests sent

// Sends raw bytes; resolves with the status and body, or closed: true when
// the server closed the connection without a response.
// (The socket is not half-closed after the request: cpp-httplib answers a
// client that shut down its sending side with a closed connection.)
function raw(port, bytes, { timeoutMs = 20000 } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const t0 = Date.now();
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`no answer and no close within ${timeoutMs} ms`)); }, timeoutMs);
    sock.on('data', (d) => { data = Buffer.concat([data, d]); });
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      const text = data.toString('latin1');
      const m = text.match(/^HTTP\/1\.1 (\d+)/);
      const body = text.includes('\r\n\r\n') ? text.slice(text.indexOf('\r\n\r\n') + 4) : '';
      resolve({ status: m ? Number(m[1]) : 0, body, closed: !m, ms: Date.now() - t0 });
    });
    sock.write(bytes);
  });
}

function request(path, body, { auth = `Bearer ${KEY}`, method = 'POST', extraHeaders = '' } = {}) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body ?? '', 'utf8');
  const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
    (auth ? `Authorization: ${auth}\r\n` : '') + `Content-Type: application/json\r\nContent-Length: ${b.length}\r\n${extraHeaders}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), b]);
}

function assertOpenAIError(r, status, what) {
  count++;
  if (r.closed) return;  // a closed connection is an acceptable answer to garbage
  if (status) assert.equal(r.status, status, `${what}: status ${r.status} body ${r.body.slice(0, 300)}`);
  else assert.ok(r.status >= 400 && r.status < 500, `${what}: status ${r.status} body ${r.body.slice(0, 300)}`);
  const j = JSON.parse(r.body);
  assert.equal(typeof j.error?.message, 'string', `${what}: ${r.body.slice(0, 300)}`);
  assert.equal(typeof j.error?.type, 'string');
  assert.ok(j.error.message.length > 0);
}

describe('serve under hostile requests', () => {
  let srv, port, baseline;
  const model = MODELS[0];
  before(async () => {
    srv = await startServer(model, ['--api-key', KEY, '--parallel', '2', '--queue', '4', '-c', '512', '--read-timeout', '2', '--max-body', '4M', '--timeout', '30']);
    port = Number(new URL(srv.url).port);
    baseline = cli(['run', '-m', model, '-p', PROMPT, '--temp', '0', '-n', '24', '-t', '1']).replace(/\n$/, '');
  });
  after(async () => {
    // Still correct after everything: the same greedy text, then a clean exit.
    const r = await raw(port, request('/v1/completions', JSON.stringify({ prompt: PROMPT, max_tokens: 24, temperature: 0 })));
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).choices[0].text, baseline);
    assert.ok(count >= 100, `only ${count} hostile requests`);
    const code = await srv.stop();
    assert.equal(code, 0, `server exit ${code}; stderr:\n${srv.stderr().slice(-4000)}`);
  });

  test('malformed JSON bodies', async () => {
    const bodies = ['', '{', '}', '[]', 'null', '"x"', '42', '{"messages": }', '{"prompt": "x"} trailing', '{"prompt": NaN}',
      '{"prompt": "x", "temperature": NaN}', '{"prompt": "x", "temperature": Infinity}', '{"prompt": "x", "temperature": 1e999}',
      '[' .repeat(100000), '{"a":'.repeat(50000), '{"prompt": "\\ud800"}', '{"prompt": "x\u0000"}', '\u0000\u0001\u0002',
      '{"prompt": "x", "max_tokens": 1e400}', '{"prompt":"x",}'];
    for (const path of ['/v1/chat/completions', '/v1/completions', '/tokenize', '/detokenize', '/apply-template'])
      for (const b of bodies) assertOpenAIError(await raw(port, request(path, b)), 400, `${path} ${b.slice(0, 30)}`);
  });

  test('invalid UTF-8 inside strings', async () => {
    for (const path of ['/v1/completions', '/v1/chat/completions', '/tokenize']) {
      const b = Buffer.concat([Buffer.from('{"prompt": "a'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('", "messages": [{"role":"user","content":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}], "content": "x"}')]);
      assertOpenAIError(await raw(port, request(path, b)), 400, `${path} invalid utf-8`);
    }
  });

  test('wrong types and out-of-range numbers name the field', async () => {
    const msg = [{ role: 'user', content: 'hi' }];
    const chat = [
      [{ messages: 'x' }, 'messages'], [{ messages: 5 }, 'messages'], [{ messages: [] }, 'messages'], [{ messages: [1] }, 'messages[0]'],
      [{ messages: [{ role: 5, content: 'x' }] }, 'messages[0].role'], [{ messages: [{ content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages[0].content[0].type'],
      [{ messages: msg, temperature: 'x' }, 'temperature'], [{ messages: msg, temperature: true }, 'temperature'],
      [{ messages: msg, temperature: -1 }, 'temperature'], [{ messages: msg, temperature: 1e300 }, 'temperature'],
      [{ messages: msg, top_p: 'x' }, 'top_p'], [{ messages: msg, top_p: 2 }, 'top_p'], [{ messages: msg, top_k: 1.5 }, 'top_k'],
      [{ messages: msg, top_k: -3 }, 'top_k'], [{ messages: msg, min_p: 2 }, 'min_p'],
      [{ messages: msg, max_tokens: -1 }, 'max_tokens'], [{ messages: msg, max_tokens: 1e12 }, 'max_tokens'],
      [{ messages: msg, max_tokens: '5' }, 'max_tokens'], [{ messages: msg, max_tokens: 1.5 }, 'max_tokens'],
      [{ messages: msg, max_tokens: 0 }, 'max_tokens'], [{ messages: msg, max_completion_tokens: -7 }, 'max_completion_tokens'],
      [{ messages: msg, stop: 5 }, 'stop'], [{ messages: msg, stop: [5] }, 'stop[0]'], [{ messages: msg, stop: [''] }, 'stop[0]'],
      [{ messages: msg, stop: ['a'.repeat(5000)] }, 'stop[0]'], [{ messages: msg, stop: Array(100).fill('a') }, 'stop'],
      [{ messages: msg, stream: 'yes' }, 'stream'], [{ messages: msg, logprobs: 'yes' }, 'logprobs'],
      [{ messages: msg, top_logprobs: 5 }, 'top_logprobs'], [{ messages: msg, logprobs: true, top_logprobs: 50 }, 'top_logprobs'],
      [{ messages: msg, n: 2 }, 'n'], [{ messages: msg, n: '1' }, 'n'], [{ messages: msg, seed: 'x' }, 'seed'], [{ messages: msg, seed: 1.5 }, 'seed'],
      [{ messages: msg, logit_bias: [] }, 'logit_bias'], [{ messages: msg, logit_bias: { abc: 1 } }, 'logit_bias.abc'],
      [{ messages: msg, logit_bias: { '-1': 1 } }, 'logit_bias.-1'], [{ messages: msg, logit_bias: { 1: 'x' } }, 'logit_bias.1'],
      [{ messages: msg, logit_bias: { 1: 1000 } }, 'logit_bias.1'], [{ messages: msg, logit_bias: { 99999999: 1 } }, 'logit_bias.99999999'],
      [{ messages: msg, presence_penalty: 5 }, 'presence_penalty'], [{ messages: msg, frequency_penalty: -5 }, 'frequency_penalty'],
      [{ messages: msg, stream_options: 'x' }, 'stream_options'], [{ messages: msg, response_format: { type: 'json_object' } }, 'response_format'],
      [{ messages: msg, model: 5 }, 'model'], [{ messages: msg, chat_template_kwargs: 'x' }, 'chat_template_kwargs'],
      [{ messages: msg, tools: 'x' }, 'tools'], [{ messages: msg, repeat_penalty: 0 }, 'repeat_penalty'],
    ];
    for (const [body, param] of chat) {
      const r = await raw(port, request('/v1/chat/completions', JSON.stringify(body)));
      assertOpenAIError(r, 400, JSON.stringify(body).slice(0, 60));
      assert.equal(JSON.parse(r.body).error.param, param, JSON.stringify(body).slice(0, 80));
    }
    const completions = [
      [{}, 'prompt'], [{ prompt: 5 }, 'prompt'], [{ prompt: [] }, 'prompt'], [{ prompt: [[]] }, 'prompt'], [{ prompt: ['a', 'b'] }, 'prompt'],
      [{ prompt: [-1] }, 'prompt[0]'], [{ prompt: [1e12] }, 'prompt[0]'], [{ prompt: [1.5] }, 'prompt[0]'], [{ prompt: ['x', 1] }, 'prompt'],
      [{ prompt: 'x', echo: 'yes' }, 'echo'], [{ prompt: 'x', logprobs: 50 }, 'logprobs'], [{ prompt: 'x', logprobs: true }, 'logprobs'],
    ];
    for (const [body, param] of completions) {
      const r = await raw(port, request('/v1/completions', JSON.stringify(body)));
      assertOpenAIError(r, 400, JSON.stringify(body));
      assert.equal(JSON.parse(r.body).error.param, param, JSON.stringify(body));
    }
    for (const [path, body] of [['/tokenize', {}], ['/tokenize', { content: 5 }], ['/tokenize', { content: 'x', add_special: 'y' }],
      ['/detokenize', {}], ['/detokenize', { tokens: 'x' }], ['/detokenize', { tokens: [-1] }], ['/detokenize', { tokens: [1e12] }],
      ['/detokenize', { tokens: ['x'] }], ['/apply-template', {}], ['/apply-template', { messages: [{ role: 'user' , content: 7 }] }]])
      assertOpenAIError(await raw(port, request(path, JSON.stringify(body))), 400, `${path} ${JSON.stringify(body)}`);
  });

  test('unknown model, unknown route, oversized prompt, body and conversation', async () => {
    assertOpenAIError(await raw(port, request('/v1/chat/completions', JSON.stringify({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] }))), 404, 'unknown model');
    assertOpenAIError(await raw(port, request('/v1/models/gpt-9', '', { method: 'GET' })), 404, 'unknown model id');
    assertOpenAIError(await raw(port, request('/v1/nothing', '{}')), 404, 'unknown route');
    assertOpenAIError(await raw(port, request('/v1/chat/completions', '', { method: 'GET' })), 0, 'GET on a POST route');
    // 100k tokens of prompt: a 400 naming both sizes.
    const big = await raw(port, request('/v1/completions', JSON.stringify({ prompt: 'the end '.repeat(50000) })));
    assertOpenAIError(big, 400, 'long prompt');
    assert.match(JSON.parse(big.body).error.message, /\d{5,} tokens and the context is 512/);
    const ids = await raw(port, request('/v1/completions', JSON.stringify({ prompt: Array(100000).fill(1) })));
    assertOpenAIError(ids, 400, 'long id prompt');
    // A 10 MB body: refused before it is read.
    assertOpenAIError(await raw(port, request('/v1/chat/completions', 'x'.repeat(10 << 20))), 413, '10 MB body');
    // 10^5 messages (3.4 MB): parsed, rendered, and refused for the context.
    const many = JSON.stringify({ messages: Array(100000).fill({ role: 'user', content: 'hi' }) });
    const t0 = Date.now();
    assertOpenAIError(await raw(port, request('/v1/chat/completions', many), { timeoutMs: 60000 }), 400, '10^5 messages');
    console.log(`# 10^5 messages refused in ${Date.now() - t0} ms`);
    // A header line longer than the server takes.
    assertOpenAIError(await raw(port, request('/health', '', { method: 'GET', extraHeaders: `X-Big: ${'a'.repeat(20000)}\r\n` })), 0, 'huge header');
  });

  test('missing or wrong API key on every route', async () => {
    const routes = [['POST', '/v1/chat/completions'], ['POST', '/v1/completions'], ['GET', '/v1/models'], ['GET', '/v1/models/x'],
      ['GET', '/metrics'], ['POST', '/tokenize'], ['POST', '/detokenize'], ['POST', '/apply-template'], ['POST', '/chat/completions'],
      ['GET', '/nothing']];
    for (const [method, path] of routes)
      for (const auth of [null, 'Bearer wrong', `Bearer ${KEY}x`, `Bearer ${KEY.slice(0, -1)}`, `Basic ${KEY}`, 'Bearer ', KEY]) {
        const r = await raw(port, request(path, '{}', { method, auth }));
        assertOpenAIError(r, 401, `${method} ${path} auth=${auth}`);
      }
    const h = await raw(port, request('/health', '', { method: 'GET', auth: null }));
    assert.equal(h.status, 200);
  });

  test('slowloris: partial requests are dropped within the read timeout, others are served meanwhile', async () => {
    const partial = [
      'POST /v1/completions HTTP/1.1\r\nHost: x\r\n',                                   // headers never end
      `POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 1000\r\n\r\n{"prompt":`,  // body never ends
      'GET /health HTTP/1.1\r\nHo',                                                       // request line cut
    ];
    const pending = [];
    for (let i = 0; i < 12; i++) pending.push(raw(port, partial[i % partial.length], { timeoutMs: 15000 }));
    // Meanwhile a real request is answered.
    const ok = await raw(port, request('/v1/completions', JSON.stringify({ prompt: PROMPT, max_tokens: 8, temperature: 0 })));
    assert.equal(ok.status, 200);
    for (const r of await Promise.all(pending)) {
      count++;
      assert.ok(r.closed || (r.status >= 400 && r.status < 500), `status ${r.status}`);
      // cpp-httplib waits up to the read timeout for the request to start,
      // then up to the read timeout for each read: 2 x 2 s, plus slack.
      assert.ok(r.ms < 2 * 2000 + 3000, `dropped after ${r.ms} ms (read timeout 2 s)`);
    }
  });
});
