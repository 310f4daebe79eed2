// `edgellm serve` through the official OpenAI client (npm `openai` 6.x), on
// every model in EDGELLM_MODELS: shapes, streaming, usage, stop strings,
// logprobs against `edgellm eval`, greedy output against `edgellm run`,
// seeds, error statuses, queue refusal and client disconnects.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { spawnSync } from 'node:child_process';
import { BIN, MODELS, startServer, cli, evalLogits, logSoftmax, metrics, sleep } from './harness.mjs';

const PROMPT = 'Once upon a time, there was a little';

async function post(url, path, body, headers = {}) {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

// Text of a whole stream, its chunks, and the usage chunk.
async function collect(stream) {
  let text = '', usage = null, finish = null, chunks = 0;
  const logprobs = [];
  for await (const c of stream) {
    chunks++;
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      text += ch.delta ? (ch.delta.content ?? '') : (ch.text ?? '');
      if (ch.finish_reason) finish = ch.finish_reason;
      if (ch.logprobs?.content) logprobs.push(...ch.logprobs.content);
    }
  }
  return { text, usage, finish, chunks, logprobs };
}

for (const model of MODELS) {
  describe(`serve ${model.split('/').pop()}`, () => {
    let srv, client, nVocab;
    before(async () => {
      srv = await startServer(model, ['--parallel', '2', '-c', '1024']);
      client = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      nVocab = (await client.models.list()).data[0].meta.n_vocab;
    });
    after(async () => {
      const code = await srv.stop();
      assert.equal(code, 0, `server exit ${code}; stderr:\n${srv.stderr()}`);
    });

    test('models and health', async () => {
      const models = await client.models.list();
      assert.equal(models.data.length, 1);
      const id = models.data[0].id;
      assert.equal((await client.models.retrieve(id)).id, id);
      const h = await fetch(`${srv.url}/health`);
      assert.equal(h.status, 200);
      assert.equal((await h.json()).status, 'ok');
    });

    test('chat, non-streamed and streamed, agree and report usage', async () => {
      const req = { model: 'ignored-if-absent', messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 24, temperature: 0 };
      delete req.model;
      const full = await client.chat.completions.create(req);
      assert.equal(full.object, 'chat.completion');
      assert.equal(full.choices.length, 1);
      assert.equal(full.choices[0].message.role, 'assistant');
      assert.ok(['stop', 'length'].includes(full.choices[0].finish_reason));
      const u = full.usage;
      assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
      assert.ok(u.completion_tokens >= 1 && u.completion_tokens <= 24);
      const tpl = await post(srv.url, '/apply-template', { messages: req.messages });
      const ids = await post(srv.url, '/tokenize', { content: tpl.body.prompt, add_special: true });
      assert.equal(u.prompt_tokens, ids.body.tokens.length, 'prompt_tokens = the rendered prompt tokenized');

      const s = await collect(await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } }));
      assert.equal(s.text, full.choices[0].message.content);
      assert.equal(s.finish, full.choices[0].finish_reason);
      assert.ok(s.usage, 'include_usage sends a usage chunk');
      assert.equal(s.usage.completion_tokens, u.completion_tokens);
      assert.equal(s.usage.prompt_tokens, u.prompt_tokens);
      // The same conversation again: its prefix comes from the slot's cache.
      assert.ok(s.usage.prompt_tokens_details.cached_tokens >= u.prompt_tokens - 1, JSON.stringify(s.usage));
    });

    test('a follow-up turn prefills only its new tokens', async () => {
      const messages = [{ role: 'user', content: 'Hello there, how are you today?' }];
      const first = await client.chat.completions.create({ messages, max_tokens: 8, temperature: 0 });
      messages.push({ role: 'assistant', content: first.choices[0].message.content });
      messages.push({ role: 'user', content: 'And then?' });
      const second = await client.chat.completions.create({ messages, max_tokens: 8, temperature: 0 });
      const cached = second.usage.prompt_tokens_details.cached_tokens;
      assert.ok(cached >= first.usage.prompt_tokens, `cached ${cached} of ${second.usage.prompt_tokens}; first prompt ${first.usage.prompt_tokens}`);
    });

    test('completions: string and token-id prompts, echo, stream with usage', async () => {
      const a = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 16, temperature: 0 });
      assert.equal(a.object, 'text_completion');
      const ids = (await post(srv.url, '/tokenize', { content: PROMPT, add_special: true })).body.tokens;
      const b = await client.completions.create({ model: '', prompt: ids, max_tokens: 16, temperature: 0 });
      assert.equal(b.choices[0].text, a.choices[0].text);
      assert.equal(b.usage.prompt_tokens, ids.length);
      const e = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 16, temperature: 0, echo: true });
      assert.equal(e.choices[0].text, PROMPT + a.choices[0].text);
      const s = await collect(await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 16, temperature: 0, stream: true, stream_options: { include_usage: true } }));
      assert.equal(s.text, a.choices[0].text);
      assert.equal(s.usage.completion_tokens, a.usage.completion_tokens);
      const d = await post(srv.url, '/detokenize', { tokens: ids });
      assert.ok(d.body.content.endsWith(PROMPT.slice(1)));
    });

    test('greedy output equals `edgellm run` on the same rendered prompt', async () => {
      const n = 32;
      const run = cli(['run', '-m', model, '-p', PROMPT, '--no-escape', '--temp', '0', '-n', String(n), '-t', '1']);
      const c = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: n, temperature: 0 });
      assert.equal(c.choices[0].text, run.replace(/\n$/, ''));
      const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is a cat?' }];
      const prompt = (await post(srv.url, '/apply-template', { messages })).body.prompt;
      const runChat = cli(['run', '-m', model, '-p', prompt, '--no-escape', '--temp', '0', '-n', String(n), '-t', '1']);
      const chat = await client.chat.completions.create({ messages, max_tokens: n, temperature: 0 });
      assert.equal(chat.choices[0].message.content, runChat.replace(/\n$/, ''));
    });

    test('stop strings spanning token boundaries are never sent', async () => {
      const base = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 40, temperature: 0, logprobs: 0 });
      const text = base.choices[0].text;
      const cps = Array.from(text);
      let checked = 0;
      for (let k = 1; k + 3 <= cps.length && checked < 6; k += Math.max(1, Math.floor(cps.length / 7))) {
        const stop = cps.slice(k, k + 3).join('');
        if (stop.includes('\uFFFD') || stop.trim() === '') continue;
        const expected = text.slice(0, text.indexOf(stop));
        const c = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 40, temperature: 0, stop: [stop, 'zzzzzzzz'] });
        assert.equal(c.choices[0].text, expected, `stop ${JSON.stringify(stop)}`);
        assert.equal(c.choices[0].finish_reason, 'stop');
        const s = await collect(await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 40, temperature: 0, stop, stream: true }));
        assert.equal(s.text, expected, `streamed, stop ${JSON.stringify(stop)}`);
        assert.equal(s.finish, 'stop');
        const chat = await collect(await client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], max_tokens: 40, temperature: 0, stream: true }));
        const ccps = Array.from(chat.text);
        if (ccps.length > k + 3) {
          const cstop = ccps.slice(k, k + 3).join('');
          if (!cstop.includes('\uFFFD') && cstop.trim() !== '') {
            const cs = await collect(await client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], max_tokens: 40, temperature: 0, stream: true, stop: cstop }));
            assert.equal(cs.text, chat.text.slice(0, chat.text.indexOf(cstop)));
          }
        }
        checked++;
      }
      assert.ok(checked >= 2, `only ${checked} stop strings could be checked in ${JSON.stringify(text)}`);
      // A token boundary explicitly: the end of one token's text and the start of the next.
      const pieces = base.choices[0].logprobs.tokens;
      for (let i = 0; i + 1 < pieces.length; i++) {
        const a = pieces[i], b = pieces[i + 1];
        if (!/^[ -~]+$/.test(a + b) || a.length < 2 || b.length < 2) continue;
        const stop = a.slice(-1) + b.slice(0, 2);
        const s = await collect(await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 40, temperature: 0, stop, stream: true }));
        assert.equal(s.text, text.slice(0, text.indexOf(stop)));
        break;
      }
    });

    test('logprobs equal the log-softmax of `edgellm eval` logits', async () => {
      const promptIds = (await post(srv.url, '/tokenize', { content: PROMPT, add_special: true })).body.tokens;
      const n = 6;
      const gen = cli(['run', '-m', model, '--tokens', promptIds.join(','), '--temp', '0', '-n', String(n), '--ids', '-t', '1'])
        .trim().split(',').filter((x) => x !== '').map(Number);
      assert.ok(gen.length >= 1);
      const c = await client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], max_tokens: 1, logprobs: true, top_logprobs: 3 });
      assert.equal(c.choices[0].logprobs.content.length, 1);
      assert.equal(c.choices[0].logprobs.content[0].top_logprobs.length, 3);

      const r = await client.completions.create({ model: '', prompt: promptIds, max_tokens: gen.length, temperature: 0, logprobs: 3 });
      const lp = r.choices[0].logprobs;
      assert.equal(lp.token_logprobs.length, gen.length);
      const rows = evalLogits(model, [...promptIds, ...gen.slice(0, -1)], nVocab);
      for (let i = 0; i < gen.length; i++) {
        const ls = logSoftmax(rows[promptIds.length - 1 + i]);
        assert.ok(Math.abs(lp.token_logprobs[i] - ls[gen[i]]) < 2e-3, `token ${i}: server ${lp.token_logprobs[i]} vs eval ${ls[gen[i]]}`);
        const best = [...ls.keys()].sort((x, y) => ls[y] - ls[x]).slice(0, 3);
        const serverTop = Object.values(lp.top_logprobs[i]).sort((x, y) => y - x);
        for (let j = 0; j < serverTop.length; j++) assert.ok(Math.abs(serverTop[j] - ls[best[j]]) < 2e-3);
      }
      // Streamed chat logprobs: one entry per generated token, same values.
      // The same tolerance as against eval above: the second request reuses
      // the first's cached prompt and recomputes its last token alone, through
      // vec_dot where the first went through the prefill GEMM; for float
      // weights the GEMM sums in another order (KernelSet::gemm_reordered), and
      // a last-bit difference that flips an f16 rounding in the KV cache moves
      // a logprob by up to ~5e-4 (stories260K, AVX-512).
      const ns = await client.chat.completions.create({ messages: [{ role: 'user', content: 'y' }], max_tokens: 8, temperature: 0, logprobs: true });
      const st = await collect(await client.chat.completions.create({ messages: [{ role: 'user', content: 'y' }], max_tokens: 8, temperature: 0, logprobs: true, stream: true }));
      assert.equal(st.logprobs.length, ns.choices[0].logprobs.content.length);
      for (let i = 0; i < st.logprobs.length; i++) {
        assert.equal(st.logprobs[i].token, ns.choices[0].logprobs.content[i].token);
        assert.ok(Math.abs(st.logprobs[i].logprob - ns.choices[0].logprobs.content[i].logprob) < 2e-3,
          `token ${i}: streamed ${st.logprobs[i].logprob} vs non-streamed ${ns.choices[0].logprobs.content[i].logprob}`);
      }
      // Echo + logprobs: the prompt's tokens first, the first without a value.
      const e = await client.completions.create({ model: '', prompt: promptIds, max_tokens: 1, temperature: 0, logprobs: 1, echo: true });
      const el = e.choices[0].logprobs;
      assert.equal(el.token_logprobs.length, promptIds.length + 1);
      assert.equal(el.token_logprobs[0], null);
      const ls1 = logSoftmax(rows[0]);
      assert.ok(Math.abs(el.token_logprobs[1] - ls1[promptIds[1]]) < 2e-3);
    });

    test('the same seed gives the same text', async () => {
      const req = { model: '', prompt: PROMPT, max_tokens: 24, temperature: 1.0, top_k: 0, top_p: 1, min_p: 0 };
      const a = await client.completions.create({ ...req, seed: 1234 });
      const b = await client.completions.create({ ...req, seed: 1234 });
      assert.equal(a.choices[0].text, b.choices[0].text);
      // Other seeds give other text, where the model's distribution leaves
      // room: not on random-weight models, whose logits are thousands apart.
      if (model.includes('stories260K')) {
        const others = await Promise.all([1, 2, 3].map((s) => client.completions.create({ ...req, seed: s })));
        assert.ok(others.some((o) => o.choices[0].text !== a.choices[0].text), 'different seeds sample differently');
      }
    });

    test('sampling parameters are honoured: logit_bias, penalties', async () => {
      const ids = (await post(srv.url, '/tokenize', { content: PROMPT, add_special: true })).body.tokens;
      const first = Number(cli(['run', '-m', model, '--tokens', ids.join(','), '--temp', '0', '-n', '1', '--ids', '-t', '1']).trim());
      const greedy = await client.completions.create({ model: '', prompt: ids, max_tokens: 1, temperature: 0, logprobs: 2 });
      const banned = await client.completions.create({ model: '', prompt: ids, max_tokens: 1, temperature: 0, logprobs: 2, logit_bias: { [first]: -100 } });
      // A bias of -100 outweighs the gap to the runner-up (random-weight
      // models can have gaps of thousands): then the runner-up wins.
      const [best, second] = Object.values(greedy.choices[0].logprobs.top_logprobs[0]).sort((x, y) => y - x);
      // (Values to 1e-3: a cached prefix makes the last prompt token a
      // one-token pass instead of part of a batch: other rounding.)
      const near = (a, b) => Math.abs(a - b) < 1e-3;
      const got = banned.choices[0].logprobs.token_logprobs[0];
      if (best - second < 100) assert.ok(near(got, second), `the banned token was chosen (${got} vs ${best}, ${second})`);
      else assert.ok(near(got, best));
      const boosted = await client.completions.create({ model: '', prompt: ids, max_tokens: 1, temperature: 0, logprobs: 0, logit_bias: { [first]: 100 } });
      assert.ok(near(boosted.choices[0].logprobs.token_logprobs[0], best));
      await assert.rejects(client.completions.create({ model: '', prompt: ids, max_tokens: 1, logit_bias: { [nVocab]: 1 } }),
        (e) => e.status === 400 && /logit_bias/.test(e.param));
      const p = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 8, temperature: 0, presence_penalty: 2, frequency_penalty: 2 });
      assert.equal(typeof p.choices[0].text, 'string');
    });

    test('errors: 400 naming the field, 404 unknown model, n > 1', async () => {
      await assert.rejects(client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }),
        (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'temperature' && /temperature/.test(e.message));
      await assert.rejects(client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], max_tokens: -1 }),
        (e) => e.status === 400 && e.param === 'max_tokens');
      await assert.rejects(client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], n: 2 }),
        (e) => e.status === 400 && e.param === 'n');
      await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
        (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found');
      await assert.rejects(client.completions.create({ model: '', prompt: 'x '.repeat(3000) }),
        (e) => e.status === 400 && /1024/.test(e.message) && /tokens/.test(e.message));
      await assert.rejects(client.models.retrieve('no-such-model'), (e) => e.status === 404);
    });
  });
}

describe('serve: API key, queue and disconnects', () => {
  const model = MODELS[0];  // stories260K
  // Long streams that must still be running when the test acts: its end of
  // text (</s>, id 2) banned, so a story cannot end early.
  const NO_EOS = { 2: -100 };

  test('the API key guards every route but /health', async () => {
    const srv = await startServer(model, ['--api-key', 's3cret']);
    try {
      const bad = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
      await assert.rejects(bad.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
      await assert.rejects(bad.chat.completions.create({ messages: [{ role: 'user', content: 'x' }] }), (e) => e.status === 401);
      for (const [method, path] of [['GET', '/metrics'], ['POST', '/tokenize'], ['POST', '/detokenize'], ['POST', '/apply-template'],
        ['POST', '/v1/completions'], ['GET', '/v1/models'], ['GET', '/nope']]) {
        const r = await fetch(srv.url + path, { method, body: method === 'POST' ? '{}' : undefined });
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.ok((await r.json()).error.message);
      }
      assert.equal((await fetch(`${srv.url}/health`)).status, 200);
      const good = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 's3cret', maxRetries: 0 });
      const c = await good.completions.create({ model: '', prompt: PROMPT, max_tokens: 4, temperature: 0 });
      assert.ok(c.choices[0].text.length > 0);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });

  test('a full queue answers 429 with Retry-After; a disconnect frees the slot at once', async () => {
    const srv = await startServer(model, ['--parallel', '1', '--queue', '0', '-c', '2048']);
    try {
      const client = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'x', maxRetries: 0 });
      const controller = new AbortController();
      const stream = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 2000, temperature: 1, stream: true, logit_bias: NO_EOS }, { signal: controller.signal });
      const it = stream[Symbol.asyncIterator]();
      await it.next();
      const r = await fetch(`${srv.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'x', max_tokens: 1 }) });
      assert.equal(r.status, 429);
      assert.ok(r.headers.get('retry-after'));
      assert.equal((await r.json()).error.type, 'rate_limit_error');
      await it.next();
      controller.abort();
      const t0 = Date.now();
      let m;
      do {
        await sleep(20);
        m = await metrics(srv.url);
      } while (m.edgellm_slots_busy !== 0 && Date.now() - t0 < 5000);
      assert.equal(m.edgellm_slots_busy, 0, 'the slot is free after the client left');
      assert.equal(m.edgellm_requests_cancelled_total, 1);
      const generated = m.edgellm_generated_tokens_total;
      assert.ok(generated < 2000, `generation went on after the disconnect: ${generated} tokens`);
      await sleep(200);
      assert.equal((await metrics(srv.url)).edgellm_generated_tokens_total, generated, 'nothing generated after the slot was freed');
      const c = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 4, temperature: 0 });
      assert.ok(c.choices[0].text.length > 0);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });

  test('a port in use is refused, not shared', async () => {
    const srv = await startServer(model);
    try {
      const port = new URL(srv.url).port;
      const r = spawnSync(BIN, ['serve', '-m', model, '--port', port, '-t', '1'], { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+/);
      assert.equal(r.stdout, '');
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });

  test('SIGTERM ends an in-flight stream with an error event and exits 0', async () => {
    const srv = await startServer(model, ['-c', '2048']);
    const client = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const stream = await client.completions.create({ model: '', prompt: PROMPT, max_tokens: 2000, temperature: 1, stream: true, logit_bias: NO_EOS });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    const exit = srv.stop();
    await assert.rejects((async () => { for (;;) { const x = await it.next(); if (x.done) throw new Error('stream ended without an error'); } })(),
      (e) => /shutting down/.test(e.message) || e instanceof OpenAI.APIError);
    assert.equal(await exit, 0);
  });
});
