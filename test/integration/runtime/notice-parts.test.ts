// Parts of a split notice through the real provision handler on moto, under the function's own role
// and on a fake clock: the parts that arrive first are kept in the state table and their messages
// acknowledged, and the invocation that brings the rest plans the whole observation in one decision
// (one CreateFleet for its identical claims, every pod nominated). A part that never arrives holds
// the others back for NOTICE_PART_WAIT_MS only: after that the next invocation plans what arrived
// and names the missing parts in a warning.

import { DescribeFleetsCommand } from '@aws-sdk/client-ec2';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/apis/core/v1';
import { DETAIL_TYPE, EVENT_SOURCE } from '../../../shared/contracts';
import { noticePodFromPod, splitNotice } from '../../../shared/notice';
import type { PodsUnschedulableDetail } from '../../../shared/notice/types';
import { NOTICE_PART_WAIT_MS } from '../../../shared/runtime/notice-parts';
import { fakeClock } from '../../providers/fakes';
import { RecordingLog } from '../../runtime/fakes';
import { M5_LARGE_ON_DEMAND, testNodePool } from '../../support/nodepools';
import { ProvisionFixture } from '../helpers';

const CLUSTER = 'c1';

// One instance type: every claim is the same request, so one decision is one CreateFleet.
const nodePool = testNodePool({ template: { requirements: M5_LARGE_ON_DEMAND } });

let fixture: ProvisionFixture;
const clock = fakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
const log = new RecordingLog();

// 1.5 vCPU: one pod per m5.large.
const pendingPod = (name: string) => fixture.pendingPod(name, '1500m');

/** One observation of these pods, split as the watcher splits a notice too large for one entry. */
function splitObservation(pods: readonly Pod[], observedAt: string): PodsUnschedulableDetail[] {
  const detail = { cluster: CLUSTER, observedAt, pods: pods.map(noticePodFromPod), daemonSets: [] };
  const parts = splitNotice(detail, 500);
  expect(parts.length).toBeGreaterThanOrEqual(3);
  return parts;
}

/** The queue's delivery of these notices (one message each). */
function delivery(details: readonly PodsUnschedulableDetail[], id: string) {
  const bodies = details.map((detail) =>
    JSON.stringify({ source: EVENT_SOURCE, 'detail-type': DETAIL_TYPE.podsUnschedulable, detail }),
  );
  return fixture.provision(bodies, id);
}

async function fleetCount(): Promise<number> {
  return ((await fixture.account.ec2.send(new DescribeFleetsCommand({}))).Fleets ?? []).length;
}

/** The parts of this observation kept in the state table (the tests share it, in any order). */
async function keptOf(parts: readonly PodsUnschedulableDetail[]) {
  const batchId = parts[0]?.part?.batchId;
  return (await fixture.runtime.state.noticeParts()).filter((k) => k.batchId === batchId);
}

/** The warnings that this observation was planned without some of its parts. */
function warningsFor(parts: readonly PodsUnschedulableDetail[]) {
  return log.lines.filter(
    (l) =>
      l.message === 'notice parts never arrived: planning the observation with the parts that did' &&
      l.fields?.batchId === parts[0]?.part?.batchId,
  );
}

async function nominatedUids(): Promise<Set<string>> {
  return new Set((await fixture.runtime.state.nominations()).flatMap((n) => n.podUids));
}

beforeAll(async () => {
  fixture = await ProvisionFixture.start({ cluster: CLUSTER, nodePools: [nodePool], clock, log });
  return () => fixture.stop();
});

describe('split notices on moto', () => {
  it('keeps the first parts, acknowledged, and plans the whole observation in one decision when the rest arrive', async () => {
    // As stored: the API server gives each pod its uid, which the notice carries.
    const pods = Array.from({ length: 6 }, (_, i) => pendingPod(`together-${i}`));
    const parts = splitObservation(pods, new Date(clock()).toISOString());
    const fleetsBefore = await fleetCount();
    const recordsBefore = (await fixture.runtime.state.nodeClaims()).length;

    // The first invocation gets all but the last part: kept, acknowledged, nothing planned.
    expect((await delivery(parts.slice(0, -1), 'first')).batchItemFailures).toEqual([]);
    expect((await keptOf(parts)).map((k) => k.index).sort()).toEqual(parts.slice(0, -1).map((p) => p.part?.index));
    expect(await fleetCount()).toBe(fleetsBefore);
    expect((await fixture.runtime.state.nodeClaims()).length).toBe(recordsBefore);

    // Seconds later the last part: one decision for all six pods, one CreateFleet, parts cleared.
    clock.advance(3_000);
    expect((await delivery(parts.slice(-1), 'second')).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 1);
    const nominated = await nominatedUids();
    for (const p of pods) expect(nominated.has(noticePodFromPod(p).uid)).toBe(true);
    const records = await fixture.runtime.state.nodeClaims();
    expect(records).toHaveLength(recordsBefore + pods.length);
    for (const record of records) expect(record.status.providerID).toMatch(/^aws:\/\/\/us-west-2a\/i-/);
    expect(await keptOf(parts)).toEqual([]);
    expect(warningsFor(parts)).toEqual([]);
  }, 180_000);

  it('plans an observation whose last part never arrives once the bound has passed, and says which part is missing', async () => {
    const pods = Array.from({ length: 6 }, (_, i) => pendingPod(`lost-${i}`));
    const parts = splitObservation(pods, new Date(clock()).toISOString());
    const lost = parts.at(-1);
    const arrived = parts.slice(0, -1);
    const arrivedUids = arrived.flatMap((p) => p.pods.map((q) => q.uid));
    const lostUids = lost?.pods.map((q) => q.uid) ?? [];
    const fleetsBefore = await fleetCount();
    const recordsBefore = (await fixture.runtime.state.nodeClaims()).length;

    expect((await delivery(arrived, 'early')).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore);

    // Another notice just inside the bound (the watcher's next run): planned alone, the parts wait.
    const other = pendingPod('lost-other');
    const otherNotice = {
      cluster: CLUSTER,
      observedAt: new Date(clock()).toISOString(),
      pods: [noticePodFromPod(other)],
      daemonSets: [],
    };
    clock.advance(NOTICE_PART_WAIT_MS - 1_000);
    expect((await delivery([otherNotice], 'inside')).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 1);
    let nominated = await nominatedUids();
    expect(nominated.has(noticePodFromPod(other).uid)).toBe(true);
    for (const uid of arrivedUids) expect(nominated.has(uid)).toBe(false);
    expect((await keptOf(parts)).length).toBe(arrived.length);

    // Past the bound the next notice brings the decision on with what arrived, and it says so.
    clock.advance(1_000);
    const later = { ...otherNotice, observedAt: new Date(clock()).toISOString() };
    expect((await delivery([later], 'past')).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 2);
    nominated = await nominatedUids();
    for (const uid of arrivedUids) expect(nominated.has(uid)).toBe(true);
    for (const uid of lostUids) expect(nominated.has(uid)).toBe(false);
    expect((await fixture.runtime.state.nodeClaims()).length - recordsBefore).toBe(1 + arrivedUids.length);
    expect(await keptOf(parts)).toEqual([]);
    const [warning, ...more] = warningsFor(parts);
    expect(more).toEqual([]);
    expect(warning?.level).toBe('warn');
    expect(warning?.fields).toMatchObject({
      batchId: lost?.part?.batchId,
      missing: [lost?.part?.index],
      waitedMs: NOTICE_PART_WAIT_MS,
    });
  }, 180_000);
});
