// @ts-check
// The official client's schedule and agent-list methods (agent.list and the
// seven agent.schedules methods) against the mock, with the client's own
// parameter and response types. Together with client.test.js every one of
// the client's twelve methods is exercised.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import OzAPI, { BadRequestError, NotFoundError, PermissionDeniedError } from 'oz-agent-sdk';

import { buildMock, control, startMock } from '../mock-server.js';

/** @typedef {import('oz-agent-sdk/resources/agent/schedules').ScheduledAgentItem} ScheduledAgentItem */
/** @typedef {import('oz-agent-sdk/resources/agent/schedules').ScheduleCreateParams} ScheduleCreateParams */
/** @typedef {import('oz-agent-sdk/resources/agent/schedules').ScheduleUpdateParams} ScheduleUpdateParams */
/** @typedef {import('oz-agent-sdk/resources/agent/agent').AgentListResponse} AgentListResponse */
/** @typedef {import('oz-agent-sdk/resources/agent/runs').RunItem} RunItem */

/** @type {{ url: string, stop: () => Promise<void> }} */
let mock;

before(async () => {
  mock = await startMock({ bin: await buildMock() });
});

after(async () => {
  await mock?.stop();
});

/** An official client in a fresh isolated session with a frozen clock. */
async function frozenClient(label, apiKey = 'wk-mock-alice') {
  const session = `ts-${label}-${randomUUID()}`;
  await control(mock.url, 'PUT', '/clock', { session, body: { mode: 'virtual' } });
  const client = new OzAPI({ apiKey, baseURL: mock.url, defaultHeaders: { 'X-Mock-Session': session } });
  return { client, session };
}

describe('agent.schedules', () => {
  test('create, retrieve, list (by name), update, pause, resume, delete', async () => {
    const { client } = await frozenClient('schedules');

    /** @type {ScheduleCreateParams} */
    const params = {
      name: 'Nightly triage',
      cron_schedule: '0 3 * * *',
      prompt: 'Label the issues opened since yesterday',
      agent_config: { environment_id: 'env-web-app' },
    };
    /** @type {ScheduledAgentItem} */
    const made = await client.agent.schedules.create(params);
    assert.equal(made.name, 'Nightly triage');
    assert.equal(made.cron_schedule, '0 3 * * *');
    assert.equal(made.enabled, true);
    assert.equal(made.prompt, params.prompt);
    assert.equal(made.created_by?.uid, 'user-alice');
    assert.equal(made.scope?.type, 'Team');
    assert.equal(made.environment?.name, 'Web app (Node 20)');
    assert.equal(made.history?.last_ran, null);
    assert.ok(made.history?.next_run, 'an enabled schedule has a next run');
    assert.deepEqual(await client.agent.schedules.retrieve(made.id), made);

    await client.agent.schedules.create({ name: 'Alpha sweep', cron_schedule: '*/30 * * * *', prompt: 'Sweep' });
    const { schedules } = await client.agent.schedules.list();
    assert.deepEqual(
      schedules.map((s) => s.name),
      ['Alpha sweep', 'Nightly triage'],
    );

    /** @type {ScheduleUpdateParams} */
    const update = { name: 'Weekday triage', cron_schedule: '30 4 * * 1-5', enabled: true, prompt: 'Label and route' };
    const updated = await client.agent.schedules.update(made.id, update);
    assert.equal(updated.name, 'Weekday triage');
    assert.equal(updated.cron_schedule, '30 4 * * 1-5');
    assert.equal(updated.created_at, made.created_at);

    const paused = await client.agent.schedules.pause(made.id);
    assert.equal(paused.enabled, false);
    assert.equal(paused.history?.next_run, null);
    const resumed = await client.agent.schedules.resume(made.id);
    assert.equal(resumed.enabled, true);
    assert.ok(resumed.history?.next_run);

    const gone = await client.agent.schedules.delete(made.id);
    assert.deepEqual(gone, { success: true });
    await assert.rejects(client.agent.schedules.retrieve(made.id), NotFoundError);
  });

  test('a schedule spawns one run per tick as the clock moves; a paused one none', async () => {
    const { client, session } = await frozenClient('spawn');
    const daily = await client.agent.schedules.create({ name: 'Daily', cron_schedule: '0 3 * * *', prompt: 'Daily check' });
    const paused = await client.agent.schedules.create({ name: 'Paused', cron_schedule: '0 3 * * *', prompt: 'Never', enabled: false });

    await control(mock.url, 'POST', '/clock/advance', { session, body: { by: '72h' } });

    const { runs } = await client.agent.runs.list({ schedule_id: daily.id, limit: 10 });
    assert.equal(runs.length, 3, 'three days, three runs');
    for (const /** @type {RunItem} */ run of runs) {
      assert.equal(run.source, 'SCHEDULED_AGENT');
      assert.equal(run.schedule?.schedule_id, daily.id);
      assert.equal(run.prompt, 'Daily check');
      assert.match(run.created_at, /T03:00:00/);
      assert.equal(run.state, 'SUCCEEDED');
    }
    assert.equal((await client.agent.runs.list({ schedule_id: paused.id })).runs.length, 0);
    const after = await client.agent.schedules.retrieve(daily.id);
    assert.equal(after.history?.last_ran, runs[0].created_at, 'the newest run is listed first');

    // The control API lists a schedule's runs and fires one now.
    const fired = await control(mock.url, 'POST', `/schedules/${paused.id}/fire`, { session });
    assert.equal(fired.source, 'SCHEDULED_AGENT');
    const listed = await control(mock.url, 'GET', `/schedules/${paused.id}/runs`, { session });
    assert.deepEqual(listed.runs.map((r) => r.run_id), [fired.run_id]);
  });

  test('bad input is a BadRequestError naming the field; another team gets PermissionDeniedError', async () => {
    const { client, session } = await frozenClient('errors');
    await assert.rejects(
      client.agent.schedules.create({ name: 'x', cron_schedule: 'every night', prompt: 'p' }),
      (err) => err instanceof BadRequestError && /cron_schedule/.test(String(err.error?.detail)),
    );
    await assert.rejects(
      // @ts-expect-error: the client's types require a name; the server says so too.
      client.agent.schedules.create({ cron_schedule: '0 3 * * *', prompt: 'p' }),
      (err) => err instanceof BadRequestError && /name/.test(String(err.error?.detail)),
    );
    const mine = await client.agent.schedules.create({ name: 'Acme only', cron_schedule: '0 3 * * *', prompt: 'p' });
    const carol = new OzAPI({ apiKey: 'wk-mock-carol', baseURL: mock.url, defaultHeaders: { 'X-Mock-Session': session } });
    await assert.rejects(carol.agent.schedules.retrieve(mine.id), PermissionDeniedError);
    await assert.rejects(carol.agent.schedules.pause(mine.id), PermissionDeniedError);
    assert.deepEqual((await carol.agent.schedules.list()).schedules, []);
  });
});

describe('agent.list', () => {
  test('lists the skills of the caller\'s environments, with variants, and their last run', async () => {
    const { client } = await frozenClient('agents');
    /** @type {AgentListResponse} */
    const all = await client.agent.list();
    const names = all.agents.map((a) => a.name);
    assert.deepEqual(names, [...names].sort(), 'by name');
    assert.ok(names.includes('release-notes'));
    const notes = all.agents.find((a) => a.name === 'release-notes');
    assert.equal(notes?.variants.length, 2);
    for (const v of notes?.variants ?? []) {
      assert.match(v.id, /^[^/]+\/[^:]+:.+SKILL\.md$/);
      assert.ok(v.source.owner && v.source.name && v.source.skill_path);
      assert.ok(v.environments.length > 0);
    }

    const api = await client.agent.list({ repo: 'acme/api' });
    assert.deepEqual(api.agents.map((a) => a.name), ['release-notes', 'triage']);

    await client.agent.run({ skill: 'acme/api:triage' });
    const recent = await client.agent.list({ sort_by: 'last_run', refresh: true });
    assert.equal(recent.agents[0].name, 'triage', 'the skill just run comes first');
    assert.ok(recent.agents[0].variants[0].last_run_timestamp);
  });
});
