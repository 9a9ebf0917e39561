// The official TypeScript client's retries, error types and timeout against
// faults the agentruns mock injects on demand (docs/control-api.md: "Faults on demand").
// Nothing in the client is patched: the faults come from fault rules added
// through the control API, or from the X-Mock-Fault header sent per request.
//
// Every test runs in its own isolated session (X-Mock-Session, sent through
// the client's defaultHeaders), so the tests run concurrently and no rule or
// journal entry of one test is seen by another.
//
// Run: cd clients/typescript && npm install && npm test

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import OzAPI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  InternalServerError,
  RateLimitError,
} from 'oz-agent-sdk';

import { control, startMock } from '../mock-server.js';

let mock;
let baseURL; // where the mock listens, e.g. http://127.0.0.1:4010

before(async () => {
  mock = await startMock();
  baseURL = mock.url;
});

after(async () => {
  await mock?.stop();
});

/** A fresh isolated session and the official client that works in it. */
function sessionClient(label, options = {}) {
  const session = `ts-${label}-${randomUUID()}`;
  const client = new OzAPI({
    apiKey: 'wk-mock-alice',
    baseURL,
    defaultHeaders: { 'X-Mock-Session': session },
    ...options,
  });
  return { session, client };
}

/** [retry_count, status] of every API request the session's mock saw, oldest first. */
async function attemptsOf(session) {
  const attempts = await control(baseURL, 'GET', '/requests', { session });
  return attempts.map((a) => [a.retry_count, a.status]);
}

/** The session's journal once `done(journal)` holds, or the last one seen after `timeoutMs`. */
async function pollAttempts(session, done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const attempts = (await control(baseURL, 'GET', '/requests', { session })).map(({ at, ...a }) => a);
    if (done(attempts) || Date.now() > deadline) return attempts;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('retries against injected faults', { concurrency: true }, () => {
  // docs/testing-your-client.md quotes this test, from here to "README end".
  test('two injected 429s on a create: the client retries and the third attempt succeeds', async () => {
    const session = `retries-${randomUUID()}`; // an isolated session: its own runs, fault rules and journal
    const mockControl = (method, route, body) =>
      fetch(`${baseURL}/__mock${route}`, {
        method,
        headers: { 'X-Mock-Session': session, 'Content-Type': 'application/json' },
        body: body && JSON.stringify(body),
      }).then((res) => res.json());
    const client = new OzAPI({ apiKey: 'wk-mock-alice', baseURL, defaultHeaders: { 'X-Mock-Session': session } });

    // The next two creates get a 429 resource_unavailable problem with Retry-After: 1.
    await mockControl('POST', '/faults', {
      method: 'POST',
      path: '/agent/run*',
      status: 429,
      retry_after: '1s', // Retry-After is sent in whole seconds
      times: 2,
    });

    const started = Date.now();
    const run = await client.agent.run({ prompt: 'Fix the flaky login test' }); // maxRetries defaults to 2
    assert.equal(run.state, 'QUEUED');
    assert.ok(Date.now() - started >= 1900, 'the client waited Retry-After (1 s) before each retry');

    // The mock saw three attempts, with the client's X-Stainless-Retry-Count 0, 1 and 2.
    const attempts = await mockControl('GET', '/requests');
    assert.deepEqual(
      attempts.map((a) => [a.retry_count, a.status, a.injected ?? false]),
      [
        [0, 429, true],
        [1, 429, true],
        [2, 200, false],
      ],
    );
    const [rule] = await mockControl('GET', '/faults');
    assert.equal(rule.matched, 3);
    assert.equal(rule.injected, 2);
  });
  // README end.

  test('with maxRetries: 0 the same fault is a RateLimitError with the problem body and Retry-After', async () => {
    const { session, client } = sessionClient('ratelimit', { maxRetries: 0 });
    await control(baseURL, 'POST', '/faults', {
      session,
      body: { method: 'POST', path: '/agent/run*', status: 429, retry_after: '1s', times: 2 },
    });

    await assert.rejects(client.agent.run({ prompt: 'Fix the flaky login test' }), (err) => {
      assert.ok(err instanceof RateLimitError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 429);
      assert.match(err.headers.get('content-type'), /^application\/problem\+json/);
      assert.equal(err.headers.get('retry-after'), '1');
      assert.equal(err.error.status, 429);
      assert.match(err.error.type, /resource_unavailable$/);
      assert.equal(err.error.retryable, true);
      assert.equal(typeof err.error.detail, 'string');
      return true;
    });
    assert.deepEqual(await attemptsOf(session), [[0, 429]], 'one attempt, no retry');
    const [rule] = await control(baseURL, 'GET', '/faults', { session });
    assert.equal(rule.matched, 1);
    assert.equal(rule.injected, 1);
  });

  test('a 500 internal_error is retried, and the retry succeeds', async () => {
    const { session, client } = sessionClient('internal');
    await control(baseURL, 'POST', '/faults', {
      session,
      body: { method: 'POST', path: '/agent/run*', error_code: 'internal_error', times: 1 },
    });

    const run = await client.agent.run({ prompt: 'Survive one server error' });
    assert.equal(run.state, 'QUEUED');
    assert.deepEqual(await attemptsOf(session), [
      [0, 500],
      [1, 200],
    ]);

    // Without retries the same fault is an InternalServerError with the problem body.
    await control(baseURL, 'POST', '/faults', {
      session,
      body: { method: 'POST', path: '/agent/run*', error_code: 'internal_error', times: 1 },
    });
    await assert.rejects(client.agent.run({ prompt: 'Fail once' }, { maxRetries: 0 }), (err) => {
      assert.ok(err instanceof InternalServerError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 500);
      assert.match(err.error.type, /internal_error$/);
      assert.equal(err.error.retryable, true);
      return true;
    });
  });

  test('a delay longer than the client timeout is an APIConnectionTimeoutError', async () => {
    const { session, client } = sessionClient('timeout', { timeout: 300, maxRetries: 0 });

    const started = Date.now();
    await assert.rejects(
      client.agent.run({ prompt: 'Too slow' }, { headers: { 'X-Mock-Fault': 'delay=2s' } }),
      (err) => {
        assert.ok(err instanceof APIConnectionTimeoutError, `got ${err?.constructor?.name}: ${err?.message}`);
        return true;
      },
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1500, `the client gave up after its 300 ms timeout, not after the 2 s delay (${elapsed} ms)`);

    // The mock stops waiting once the client hangs up: the abandoned attempt is
    // journalled unanswered (status 0), well before the 2 s delay would have ended.
    const lister = sessionClient('timeout-list', { timeout: 300, maxRetries: 0 });
    await assert.rejects(
      lister.client.agent.runs.list({ limit: 1 }, { headers: { 'X-Mock-Fault': 'delay=2s' } }),
      APIConnectionTimeoutError,
    );
    const attempts = await pollAttempts(lister.session, (a) => a.length > 0, 1000);
    assert.deepEqual(attempts, [{ method: 'GET', path: '/agent/runs', retry_count: 0, status: 0, injected: true }]);

    // A delay shorter than the timeout is only a delay.
    const run = await client.agent.run({ prompt: 'Slow but in time' }, { headers: { 'X-Mock-Fault': 'delay=50ms' } });
    assert.equal(run.state, 'QUEUED');
  });

  // The mock reads a create's body before a delay, so it notices the client
  // hanging up and creates nothing for a caller that is gone.
  test(
    'a create abandoned during a delay fault is journalled unanswered',
    async () => {
      const { session, client } = sessionClient('timeout-create', { timeout: 300, maxRetries: 0 });
      await assert.rejects(
        client.agent.run({ prompt: 'Too slow' }, { headers: { 'X-Mock-Fault': 'delay=2s' } }),
        APIConnectionTimeoutError,
      );
      const attempts = await pollAttempts(session, (a) => a.length > 0, 1000);
      assert.deepEqual(attempts, [{ method: 'POST', path: '/agent/run', retry_count: 0, status: 0, injected: true }]);
    },
  );

  test('a dropped connection is retried, and the retry succeeds', async () => {
    const { session, client } = sessionClient('drop');
    await control(baseURL, 'POST', '/faults', {
      session,
      body: { method: 'POST', path: '/agent/run*', drop: true, times: 1 },
    });

    const run = await client.agent.run({ prompt: 'Survive a dropped connection' });
    assert.equal(run.state, 'QUEUED');
    assert.deepEqual(await attemptsOf(session), [
      [0, 0], // closed without an answer
      [1, 200],
    ]);
    const [rule] = await control(baseURL, 'GET', '/faults', { session });
    assert.equal(rule.matched, 2);
    assert.equal(rule.injected, 1);

    // Without retries the drop surfaces as a connection error, not a timeout.
    await control(baseURL, 'POST', '/faults', {
      session,
      body: { method: 'POST', path: '/agent/run*', drop: true, times: 1 },
    });
    await assert.rejects(client.agent.run({ prompt: 'Dropped' }, { maxRetries: 0 }), (err) => {
      assert.ok(err instanceof APIConnectionError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.ok(!(err instanceof APIConnectionTimeoutError), 'a drop is not a timeout');
      return true;
    });
  });

  test('a probability rule with a fixed seed fails the same requests every time', async () => {
    const { session, client } = sessionClient('flaky', { maxRetries: 0 });
    const flaky = { method: 'GET', path: '/agent/runs', status: 503, probability: 0.5 };

    /** Adds the rule with `seed`, lists 16 times, and returns the pattern of answers and the rule. */
    async function pattern(seed) {
      await control(baseURL, 'POST', '/faults', { session, body: { ...flaky, seed } });
      let out = '';
      for (let i = 0; i < 16; i++) {
        try {
          await client.agent.runs.list({ limit: 1 });
          out += '.';
        } catch (err) {
          assert.equal(err.status, 503, `got ${err?.constructor?.name}: ${err?.message}`);
          assert.match(err.error.type, /resource_unavailable$/);
          out += 'x';
        }
      }
      const [rule] = await control(baseURL, 'GET', '/faults', { session });
      return { out, rule };
    }

    const first = await pattern(42);
    assert.match(first.out, /x/, `some requests fail: ${first.out}`);
    assert.match(first.out, /\./, `some requests pass: ${first.out}`);
    assert.equal(first.rule.matched, 16);
    assert.equal(first.rule.injected, first.out.split('x').length - 1);

    // Reset clears the rules (and runs and journal); the same rule again gives the same pattern.
    await control(baseURL, 'POST', '/reset', { session });
    assert.deepEqual(await control(baseURL, 'GET', '/faults', { session }), []);
    const second = await pattern(42);
    assert.equal(second.out, first.out);

    // Another seed draws differently.
    await control(baseURL, 'POST', '/reset', { session });
    const other = await pattern(7);
    assert.notEqual(other.out, first.out);
  });
});

describe('the README curl example', () => {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'readme-curl.sh');

  test('test/readme-curl.sh prints what the README says', async (t) => {
    try {
      await promisify(execFile)('curl', ['--version']);
    } catch {
      t.skip('no curl on this machine');
      return;
    }
    const session = `ts-curl-${randomUUID()}`;
    const { stdout } = await promisify(execFile)('bash', ['-e', script], {
      env: { ...process.env, MOCK: baseURL, S: session },
    });
    const lines = stdout.split(/\r?\n/);

    const rule = JSON.parse(lines[0]);
    assert.equal(rule.status, 429);
    assert.equal(rule.times, 2);
    assert.deepEqual(lines.slice(1, 4), ['429', '429', '200']);
    const attempts = JSON.parse(lines[4]);
    assert.deepEqual(
      attempts.map((a) => [a.retry_count, a.status]),
      [
        [0, 429],
        [1, 429],
        [2, 200],
      ],
    );
    const [seen] = JSON.parse(lines[5]);
    assert.equal(seen.matched, 3);
    assert.equal(seen.injected, 2);
    assert.match(lines[6], /^HTTP\/1\.1 503 /);
    assert.ok(lines.includes('Retry-After: 2'), stdout);
    const problem = JSON.parse(lines.find((l) => l.startsWith('{"type"')));
    assert.match(problem.type, /resource_unavailable$/);
    assert.equal(problem.retryable, true);
    assert.equal(lines.at(-2), 'curl exit status 28', stdout);
  });
});
