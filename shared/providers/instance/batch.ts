// Launching identical NodeClaims with one CreateFleet (AWS pkg/batcher/createfleet.go, translated).
// Karpenter merges CreateFleet calls that arrive within a short window and are identical once the
// claim's own tags are left out; karpless has the whole decision at hand, so the launcher groups the
// identical claims itself and hands each group here: one instant fleet with TotalTargetCapacity = the
// members still to launch, its instances handed to the members in name order, the members left
// without one retried on their next offering after the fleet's capacity errors are marked (or failed
// with its other errors). Instances carry the batch's tag (LAUNCH_BATCH_TAG) from the launch and
// their claim's karpenter.sh/nodeclaim and Name tags right after it (the tagging controller's job
// upstream), so a batch cut short between the two is finished by the next attempt: the instances
// with its tag and no claim yet are handed out again, never launched a second time.

import type { CreateFleetCommandOutput, CreateFleetError, CreateFleetInstance, Instance } from '@aws-sdk/client-ec2';
import type { EC2NodeClass } from '../../apis/v1/types';
import { LAUNCH_BATCH_TAG, type PlannedLaunch, planLaunch } from '../../launch/request';
import { errorCode, LAUNCH_TEMPLATE_NOT_FOUND_CODES } from '../aws-errors';
import {
  capacityTypeOf,
  InstanceLauncher,
  InsufficientCapacityError,
  LaunchError,
  type LaunchedInstance,
  type LaunchRequest,
  type LaunchState,
  LIVE_STATES,
  type OfferingFailure,
  type ResolvedNodeClass,
} from './index';

const NODECLAIM_TAG = 'karpenter.sh/nodeclaim';
/** EC2 takes at most 200 values per filter. */
const FILTER_VALUES_MAX = 200;

/** A member's instance; `tagged` once it carries the member's karpenter.sh/nodeclaim tag. */
export type BatchLaunched = LaunchedInstance & { tagged: boolean };

/** What one batch's launch came to, per member: its instance, or why it has none. */
export type BatchOutcome = Map<string, BatchLaunched | Error>;

function tagOf(instance: Instance, key: string): string | undefined {
  return instance.Tags?.find((t) => t.Key === key)?.Value;
}

function foundInstance(instance: Instance, tagged: boolean): BatchLaunched {
  return {
    tagged,
    instanceId: instance.InstanceId ?? '',
    instanceType: instance.InstanceType ?? '',
    zone: instance.Placement?.AvailabilityZone ?? '',
    capacityType: capacityTypeOf(instance),
    ...(instance.ImageId ? { imageId: instance.ImageId } : {}),
    existing: true,
  };
}

export class BatchingInstanceLauncher extends InstanceLauncher {
  /**
   * Launches the members of one batch (identical requests: same pool, class, types, requirements,
   * labels, taints) with as few CreateFleet calls as capacity allows. `batchId` names the batch on
   * its instances; it must be the same every time the same members are launched.
   */
  async launchBatch(
    requests: readonly LaunchRequest[],
    resolved: ResolvedNodeClass,
    batchId: string,
  ): Promise<BatchOutcome> {
    const first = requests[0];
    const outcome: BatchOutcome = new Map();
    if (!first) return outcome;
    const names = requests.map((r) => r.nodeClaimName).sort();
    await this.adoptEarlier(batchId, names, outcome);

    const state: LaunchState = { failures: [], failedHere: new Set(), templatesRefreshed: false };
    const zones = new Set(resolved.subnets.map((s) => s.zone)).size;
    const maxAttempts = first.instanceTypes.length * Math.max(1, zones) * 2 + resolved.subnets.length + 3;
    // The batch plans as its first member: the others differ only in name.
    const representative: LaunchRequest = { ...first, nodeClaimName: batchId };
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const remaining = names.filter((n) => !outcome.has(n));
      if (remaining.length === 0) return outcome;
      const plan = planLaunch(representative, resolved, {
        clusterName: this.deps.clusterName,
        ...(this.deps.region ? { region: this.deps.region } : {}),
        availability: await this.availability(representative, resolved, state.failedHere),
        batch: { id: batchId, members: remaining },
      });
      if (plan.overrides.length === 0) break;
      for (const template of plan.templates) {
        await this.retryThrottled(() => this.deps.launchTemplates.ensure(template.input));
      }
      let out: CreateFleetCommandOutput;
      try {
        out = await this.retryThrottled(() => this.deps.ec2.createFleet(plan.fleet));
      } catch (error) {
        if (this.refreshTemplates(errorCode(error), plan, state)) continue;
        for (const name of remaining) outcome.set(name, error instanceof Error ? error : new Error(String(error)));
        return outcome;
      }
      const launched = (out.Instances ?? []).flatMap((entry) => (entry.InstanceIds ?? []).map((id) => ({ id, entry })));
      launched.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const zoneOfSubnet = new Map(resolved.subnets.map((s) => [s.id, s.zone]));
      remaining.forEach((name, i) => {
        const got = launched[i];
        if (got) outcome.set(name, this.handOut(plan, got.entry, got.id, zoneOfSubnet, first));
      });
      if (launched.length >= remaining.length) continue;
      const verdict = await this.fleetErrors(plan, out.Errors ?? [], resolved, state, zoneOfSubnet);
      if (verdict === 'retry') continue;
      for (const name of names.filter((n) => !outcome.has(n))) outcome.set(name, new LaunchError(name, verdict));
      return outcome;
    }
    for (const name of names.filter((n) => !outcome.has(n))) {
      outcome.set(name, new InsufficientCapacityError(name, state.failures));
    }
    return outcome;
  }

  /**
   * The claim's own tags on its instance, as Karpenter's tagging controller puts them: its name, and
   * Name unless the node class's spec.tags sets one (that one is already on the instance).
   */
  async tagClaim(instanceId: string, nodeClaimName: string, nodeClass: EC2NodeClass): Promise<void> {
    const createTags = this.deps.ec2.createTags;
    if (!createTags) throw new Error('the EC2 port has no createTags: batched launches cannot tag their claims');
    const tags = [{ Key: NODECLAIM_TAG, Value: nodeClaimName }];
    if (nodeClass.spec.tags?.Name === undefined) tags.push({ Key: 'Name', Value: nodeClaimName });
    await this.retryThrottled(() => createTags({ Resources: [instanceId], Tags: tags }));
  }

  /**
   * Instances an earlier attempt launched: those tagged with a member's name are that member's; those
   * with the batch's tag and no claim yet go to the members without one, in name order.
   */
  private async adoptEarlier(batchId: string, names: readonly string[], outcome: BatchOutcome): Promise<void> {
    const found: Instance[] = [];
    const filters = [
      { Name: 'tag:eks:eks-cluster-name', Values: [this.deps.clusterName] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ];
    const queries = [{ Name: `tag:${LAUNCH_BATCH_TAG}`, Values: [batchId] }];
    for (let i = 0; i < names.length; i += FILTER_VALUES_MAX) {
      queries.push({ Name: `tag:${NODECLAIM_TAG}`, Values: names.slice(i, i + FILTER_VALUES_MAX) });
    }
    for (const query of queries) {
      let token: string | undefined;
      do {
        const out = await this.retryThrottled(() =>
          this.deps.ec2.describeInstances({ Filters: [...filters, query], ...(token ? { NextToken: token } : {}) }),
        );
        found.push(...(out.Reservations ?? []).flatMap((r) => r.Instances ?? []));
        token = out.NextToken;
      } while (token);
    }
    const members = new Set(names);
    const seen = new Set<string>();
    const unclaimed: Instance[] = [];
    for (const instance of found) {
      if (!instance.InstanceId || seen.has(instance.InstanceId)) continue;
      seen.add(instance.InstanceId);
      const claim = tagOf(instance, NODECLAIM_TAG);
      if (claim !== undefined && members.has(claim)) outcome.set(claim, foundInstance(instance, true));
      else if (claim === undefined) unclaimed.push(instance);
    }
    unclaimed.sort((a, b) => ((a.InstanceId ?? '') < (b.InstanceId ?? '') ? -1 : 1));
    const waiting = names.filter((n) => !outcome.has(n));
    unclaimed.forEach((instance, i) => {
      const name = waiting[i];
      if (name) outcome.set(name, foundInstance(instance, false));
    });
  }

  private handOut(
    plan: PlannedLaunch,
    entry: CreateFleetInstance,
    instanceId: string,
    zoneOfSubnet: Map<string, string>,
    request: LaunchRequest,
  ): BatchLaunched {
    const result = this.launchedInstance(plan, entry, instanceId, zoneOfSubnet);
    const override = plan.overrides.find((o) => o.instanceType === result.instanceType && o.zone === result.zone);
    if (plan.capacityType === 'reserved' && override?.reservationId) {
      this.deps.reservations?.markLaunched(override.reservationId);
    }
    const subnetId = entry.LaunchTemplateAndOverrides?.Overrides?.SubnetId ?? override?.subnetId;
    const type = request.instanceTypes.find((t) => t.name === result.instanceType);
    if (subnetId) this.inflight.add(subnetId, 1 + (type?.capacity.pods ?? 0));
    return { ...result, tagged: false };
  }

  /** 'retry' when only capacity ran out (marked); else the failures every member left gets. */
  private async fleetErrors(
    plan: PlannedLaunch,
    errors: readonly CreateFleetError[],
    resolved: ResolvedNodeClass,
    state: LaunchState,
    zoneOfSubnet: Map<string, string>,
  ): Promise<'retry' | OfferingFailure[]> {
    const others: OfferingFailure[] = [];
    let capacity = 0;
    let templateMissing = false;
    for (const error of errors) {
      const failure = this.failureOf(error, plan.capacityType, zoneOfSubnet);
      if (await this.markCapacityFailure(error, failure, plan, resolved, state)) {
        state.failures.push(failure);
        capacity++;
      } else {
        if (LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(failure.code)) templateMissing = true;
        others.push(failure);
      }
    }
    if (templateMissing && this.refreshTemplates('InvalidLaunchTemplateName.NotFoundException', plan, state)) {
      return 'retry';
    }
    if (others.length > 0) return [...state.failures, ...others];
    if (capacity === 0) {
      return [
        { offering: '', code: 'NoInstance', message: 'CreateFleet returned fewer instances than asked and no error' },
      ];
    }
    return 'retry';
  }
}
