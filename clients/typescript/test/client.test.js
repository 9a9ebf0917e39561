// The official TypeScript client (oz-agent-sdk, pinned in package.json), used
// exactly as a customer would, against the agentruns mock built from this
// repository. Nothing in the client is patched: only apiKey, baseURL and
// headers the client already lets callers set.
//
// Run: cd clients/typescript && npm install && npm test

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import OzAPI, {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
} from 'oz-agent-sdk';

import { buildMock, control, startMock } from '../mock-server.js';

const ACTIVE = ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'];

let mock; // the default mock: any bearer key is accepted
let strictMock; // started with --strict-auth

before(async () => {
  const bin = await buildMock();
  [mock, strictMock] = await Promise.all([startMock({ bin }), startMock({ bin, args: ['--strict-auth'] })]);
});

after(async () => {
  await Promise.all([mock?.stop(), strictMock?.stop()]);
});

/** A fresh isolated session name, so no test sees another's runs. */
function newSession(label) {
  return `ts-${label}-${randomUUID()}`;
}

/**
 * The official client, pointed at the mock. `session` goes into every
 * request through the client's own defaultHeaders option.
 */
function clientFor({ apiKey = 'wk-mock-alice', session, baseURL = mock.url, ...rest } = {}) {
  return new OzAPI({
    apiKey,
    baseURL,
    ...(session ? { defaultHeaders: { 'X-Mock-Session': session } } : {}),
    ...rest,
  });
}

/** Retrieves a run until `done(run)` holds, or fails after `timeoutMs`. */
async function pollRun(client, runId, done, { timeoutMs = 10_000, everyMs = 25 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await client.agent.runs.retrieve(runId);
    if (done(run)) return run;
    if (Date.now() > deadline) {
      assert.fail(`run ${runId} is still ${run.state} after ${timeoutMs} ms: ${JSON.stringify(run)}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('create and retrieve', () => {
  // A virtual clock: runs stay exactly where they are until the test moves time.
  const session = newSession('create');
  let client;
  before(async () => {
    client = clientFor({ session });
    await control(mock.url, 'PUT', '/clock', { session, body: { mode: 'virtual' } });
  });

  test('agent.run returns a queued run whose task_id is its run_id', async () => {
    const res = await client.agent.run({
      prompt: 'Fix the flaky login test',
      config: { name: 'ts-create', environment_id: 'env-web-app' },
    });
    assert.equal(typeof res.run_id, 'string');
    assert.ok(res.run_id.length > 0);
    assert.equal(res.task_id, res.run_id);
    assert.equal(res.state, 'QUEUED');
  });

  test('agent.runs.retrieve returns the run with its prompt, title, source, creator and resolved config', async () => {
    const prompt = 'Update the README with the new install steps';
    const { run_id } = await client.agent.run({
      prompt,
      title: 'README install steps',
      config: { name: 'ts-retrieve', environment_id: 'env-web-app' },
    });

    const run = await client.agent.runs.retrieve(run_id);
    assert.equal(run.run_id, run_id);
    assert.equal(run.task_id, run_id);
    assert.equal(run.prompt, prompt);
    assert.equal(run.title, 'README install steps');
    assert.equal(run.state, 'QUEUED');
    assert.equal(run.source, 'API');
    assert.equal(run.creator?.uid, 'user-alice');
    assert.equal(run.creator?.type, 'user');
    assert.equal(run.creator?.display_name, 'Alice Archer');
    assert.equal(run.agent_config?.name, 'ts-retrieve');
    assert.equal(run.agent_config?.environment_id, 'env-web-app');
    assert.equal(run.agent_config?.model_id, 'auto', 'the default model is filled in');
    assert.ok(!Number.isNaN(Date.parse(run.created_at)), `created_at ${run.created_at} is a date-time`);
    assert.ok(!Number.isNaN(Date.parse(run.updated_at)), `updated_at ${run.updated_at} is a date-time`);

    // Without a title, one is made from the prompt.
    const untitled = await client.agent.run({ prompt: 'Add a health check endpoint' });
    const got = await client.agent.runs.retrieve(untitled.run_id);
    assert.equal(typeof got.title, 'string');
    assert.ok(got.title.length > 0);
    assert.equal(got.agent_config?.model_id, 'auto');
  });

  test('advancing the virtual clock moves a run to SUCCEEDED', async () => {
    const { run_id } = await client.agent.run({ prompt: 'Tidy the changelog' });
    assert.equal((await client.agent.runs.retrieve(run_id)).state, 'QUEUED');

    const clock = await control(mock.url, 'POST', '/clock/advance', { session, body: { by: '1h' } });
    assert.equal(clock.mode, 'virtual');

    const run = await client.agent.runs.retrieve(run_id);
    assert.equal(run.state, 'SUCCEEDED');
    assert.ok(run.session_link, 'a claimed run has a session link');
  });

  test('the API is also served under /api/v1, as in the default base URL', async () => {
    const v1 = clientFor({ session, baseURL: `${mock.url}/api/v1` });
    const { run_id } = await v1.agent.run({ prompt: 'Check the /api/v1 prefix' });
    assert.equal((await v1.agent.runs.retrieve(run_id)).run_id, run_id);
  });
});

describe('list', () => {
  const session = newSession('list');
  const name = 'ts-list';
  let client;
  const created = []; // oldest first
  before(async () => {
    client = clientFor({ session });
    await control(mock.url, 'PUT', '/clock', { session, body: { mode: 'virtual' } });
    for (let i = 0; i < 5; i++) {
      const { run_id } = await client.agent.run({ prompt: `List me ${i}`, config: { name } });
      created.push(run_id);
    }
    await client.agent.run({ prompt: 'Not in the list', config: { name: 'ts-other' } });
  });

  test('agent.runs.list filters by state and name and reports page_info', async () => {
    const page = await client.agent.runs.list({ limit: 10, state: ACTIVE, name });
    assert.deepEqual(
      page.runs.map((r) => r.run_id),
      [...created].reverse(),
      'newest first, only runs with this config name',
    );
    for (const r of page.runs) {
      assert.equal(r.agent_config?.name, name);
      assert.equal(r.state, 'QUEUED');
    }
    assert.equal(page.page_info.has_next_page, false);

    const none = await client.agent.runs.list({ state: ['SUCCEEDED', 'FAILED'], name });
    assert.deepEqual(none.runs, []);
    assert.equal(none.page_info.has_next_page, false);
  });

  test('agent.runs.list pages with cursor', async () => {
    const seen = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.agent.runs.list({ limit: 2, state: ACTIVE, name, ...(cursor ? { cursor } : {}) });
      pages++;
      assert.ok(page.runs.length <= 2, `page ${pages} has ${page.runs.length} runs`);
      seen.push(...page.runs.map((r) => r.run_id));
      if (page.page_info.has_next_page) {
        assert.equal(typeof page.page_info.next_cursor, 'string');
        assert.ok(page.page_info.next_cursor.length > 0);
      }
      cursor = page.page_info.has_next_page ? page.page_info.next_cursor : undefined;
    } while (cursor && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...created].reverse());
  });
});

describe('cancel', () => {
  const session = newSession('cancel');
  let client;
  before(async () => {
    client = clientFor({ session });
    await control(mock.url, 'PUT', '/clock', { session, body: { mode: 'virtual' } });
  });

  test('agent.runs.cancel returns the run id; cancelling again is a BadRequestError', async () => {
    const { run_id } = await client.agent.run({ prompt: 'Cancel me' });

    const res = await client.agent.runs.cancel(run_id);
    assert.equal(res, run_id);

    const run = await client.agent.runs.retrieve(run_id);
    assert.equal(run.state, 'CANCELLED');

    await assert.rejects(client.agent.runs.cancel(run_id), (err) => {
      assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 400);
      return true;
    });
  });

  test('cancelling a run that is being handed to a worker is a ConflictError with Retry-After', async () => {
    const { run_id } = await client.agent.run({ prompt: 'Cancel me while pending' });
    await control(mock.url, 'POST', `/runs/${run_id}/state`, { session, body: { state: 'PENDING' } });

    // The client retries a 409 by itself; maxRetries: 0 shows the error at once.
    await assert.rejects(client.agent.runs.cancel(run_id, { maxRetries: 0 }), (err) => {
      assert.ok(err instanceof ConflictError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 409);
      assert.ok(err.headers.get('retry-after'), 'a Retry-After header');
      return true;
    });
  });
});

describe('errors', () => {
  const session = newSession('errors');
  let alice;
  before(() => {
    alice = clientFor({ session });
  });

  test('400: a run with neither prompt nor skill is a BadRequestError', async () => {
    await assert.rejects(alice.agent.run({ config: { name: 'no-prompt' } }), (err) => {
      assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.ok(err instanceof APIError);
      assert.equal(err.status, 400);
      assert.ok(err.headers instanceof Headers);
      assert.match(err.headers.get('content-type'), /^application\/problem\+json/);
      assert.equal(err.error.status, 400);
      assert.equal(err.error.type, 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/invalid_request');
      assert.match(err.error.detail, /prompt/);
      assert.match(err.message, /^400 /);
      return true;
    });
  });

  test('401: an unknown key on a --strict-auth mock is an AuthenticationError', async () => {
    const bogus = clientFor({ apiKey: 'wk-bogus', baseURL: strictMock.url });
    await assert.rejects(bogus.agent.runs.list(), (err) => {
      assert.ok(err instanceof AuthenticationError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 401);
      assert.match(err.headers.get('content-type'), /^application\/problem\+json/);
      assert.equal(err.error.type, 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/authentication_required');
      return true;
    });

    // A known key is accepted by the same strict mock.
    const known = clientFor({ apiKey: 'wk-mock-alice', baseURL: strictMock.url });
    const page = await known.agent.runs.list({ limit: 1 });
    assert.ok(Array.isArray(page.runs));
  });

  test('401: a raw request without Authorization is an AuthenticationError', async () => {
    // The client's raw-request facility; a null header removes the default one.
    await assert.rejects(alice.get('/agent/runs', { headers: { Authorization: null } }), (err) => {
      assert.ok(err instanceof AuthenticationError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 401);
      return true;
    });
  });

  test('404: retrieving an unknown run is a NotFoundError', async () => {
    await assert.rejects(alice.agent.runs.retrieve('no-such-run'), (err) => {
      assert.ok(err instanceof NotFoundError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 404);
      assert.match(err.headers.get('content-type'), /^application\/problem\+json/);
      assert.equal(err.error.type, 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/resource_not_found');
      return true;
    });
  });

  test("403: another team's run is a PermissionDeniedError", async () => {
    const { run_id } = await alice.agent.run({ prompt: 'Acme-only work' });
    const carol = clientFor({ apiKey: 'wk-mock-carol', session });
    await assert.rejects(carol.agent.runs.retrieve(run_id), (err) => {
      assert.ok(err instanceof PermissionDeniedError, `got ${err?.constructor?.name}: ${err?.message}`);
      assert.equal(err.status, 403);
      assert.equal(err.error.type, 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/not_authorized');
      return true;
    });
    await assert.rejects(carol.agent.runs.cancel(run_id), PermissionDeniedError);
    // Bob is on Alice's team.
    const bob = clientFor({ apiKey: 'wk-mock-bob', session });
    assert.equal((await bob.agent.runs.retrieve(run_id)).run_id, run_id);
  });
});

describe('per-request headers', () => {
  test('X-Mock-Fate on agent.run makes the run fail with the chosen error code', async () => {
    const client = clientFor({ session: newSession('fate') }); // real clock
    const { run_id, state } = await client.agent.run(
      { prompt: 'Run out of credits' },
      { headers: { 'X-Mock-Fate': 'state=FAILED; error_code=insufficient_credits; step=10ms' } },
    );
    assert.equal(state, 'QUEUED');

    const run = await pollRun(client, run_id, (r) => !ACTIVE.includes(r.state), { timeoutMs: 5_000 });
    assert.equal(run.state, 'FAILED');
    assert.equal(run.status_message?.error_code, 'insufficient_credits');
    assert.equal(typeof run.status_message?.message, 'string');
    assert.ok(run.session_link, 'the run was claimed on the way');
  });
});

describe('raw responses', () => {
  const session = newSession('raw');
  let client;
  let runId;
  before(async () => {
    client = clientFor({ session });
    ({ run_id: runId } = await client.agent.run({ prompt: 'Show me the raw response' }));
  });

  test('.asResponse() gives the fetch Response', async () => {
    const res = await client.agent.runs.retrieve(runId).asResponse();
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.equal((await res.json()).run_id, runId);
  });

  test('.withResponse() gives the parsed data and the Response', async () => {
    const { data, response } = await client.agent.runs.list({ limit: 1 }).withResponse();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type'), /^application\/json/);
    assert.ok(Array.isArray(data.runs));
    assert.equal(typeof data.page_info.has_next_page, 'boolean');

    const cancelled = await client.agent.runs.cancel(runId).withResponse();
    assert.equal(cancelled.data, runId, 'cancel answers a JSON string');
    assert.match(cancelled.response.headers.get('content-type'), /^application\/json/);
  });
});

describe('control API and sessions', () => {
  test('/__mock/info says this is the mock', async () => {
    const session = newSession('info');
    const info = await control(mock.url, 'GET', '/info', { session });
    assert.equal(info.mock, 'agentruns');
    assert.equal(info.session, session);
  });

  test('X-Mock-Session isolates runs', async () => {
    const a = clientFor({ session: newSession('iso-a') });
    const b = clientFor({ session: newSession('iso-b') });
    const shared = clientFor(); // the default session
    const { run_id } = await a.agent.run({ prompt: 'Only in session A', config: { name: 'ts-isolated' } });

    assert.equal((await a.agent.runs.retrieve(run_id)).run_id, run_id);
    await assert.rejects(b.agent.runs.retrieve(run_id), NotFoundError);
    await assert.rejects(shared.agent.runs.retrieve(run_id), NotFoundError);
    const listed = await b.agent.runs.list({ name: 'ts-isolated' });
    assert.deepEqual(listed.runs, []);
  });

  test('/__mock/reset empties a session back to the fixtures', async () => {
    const session = newSession('reset');
    const client = clientFor({ session });
    const { run_id } = await client.agent.run({ prompt: 'Forget me' });
    await control(mock.url, 'POST', '/reset', { session });
    await assert.rejects(client.agent.runs.retrieve(run_id), NotFoundError);
  });
});
