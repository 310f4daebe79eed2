// Starts a real `edgellm serve` on a free port and runs the CLI, for the
// server tests. Paths come from the environment tests/server/run.sh sets:
//   EDGELLM_BIN     the edgellm binary under test
//   EDGELLM_MODELS  the models to serve, comma-separated (stories260K, a synth qwen2)
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BIN = process.env.EDGELLM_BIN;
export const MODELS = (process.env.EDGELLM_MODELS || '').split(',').filter(Boolean);
if (!BIN || MODELS.length === 0) throw new Error('set EDGELLM_BIN and EDGELLM_MODELS (tests/server/run.sh does)');
export const SANITIZED = process.env.EDGELLM_SANITIZED === '1';

// Resolves once the server printed its URL; rejects if it exits first.
export function startServer(model, extra = [], { timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(BIN, ['serve', '-m', model, '--port', '0', '-t', '1', ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '', err = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`server did not start: ${err}`)); }, timeoutMs);
    proc.stderr.on('data', (d) => { err += d; });
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^ ]+) /);
      if (m) {
        clearTimeout(timer);
        const server = {
          url: m[1], proc, stderr: () => err,
          // SIGTERM, then the exit code (a sanitizer report makes it non-zero).
          stop: () => new Promise((res) => {
            if (proc.exitCode !== null) return res(proc.exitCode);
            proc.once('exit', (code, sig) => res(code ?? sig));
            proc.kill('SIGTERM');
          }),
        };
        resolve(server);
      }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}) before it was ready: ${err}`)); });
  });
}

export function cli(args) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
}

// Logits of every position of `ids`, as `edgellm eval` writes them.
export function evalLogits(model, ids, nVocab) {
  const dir = mkdtempSync(join(tmpdir(), 'edgellm-eval-'));
  const file = join(dir, 'logits.bin');
  cli(['eval', '-m', model, '--tokens', ids.join(','), '--dump-logits', file, '-t', '1']);
  const buf = readFileSync(file);
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const rows = [];
  for (let i = 0; i < ids.length; i++) rows.push(all.subarray(i * nVocab, (i + 1) * nVocab));
  return rows;
}

export function logSoftmax(row) {
  let max = -Infinity;
  for (const v of row) if (v > max) max = v;
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  return Array.from(row, (v) => v - lse);
}

export async function metrics(url, headers = {}) {
  const text = await (await fetch(`${url}/metrics`, { headers })).text();
  const values = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    values[line.slice(0, sp)] = Number(line.slice(sp + 1));
  }
  return values;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export { writeFileSync };
