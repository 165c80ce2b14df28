// The two readiness conditions about where a node class may place instances
// (AWS pkg/controllers/nodeclass capacityreservation.go, placementgroup.go): CapacityReservationsReady
// from the reservations its selector terms find, PlacementGroupReady from the group its selector
// names. Each is reported only when the node class uses the feature, so node classes without
// reservations or groups keep Karpenter v1.0's five conditions.

import type { Condition, EC2NodeClassSpec, EC2NodeClassStatus } from '../apis/v1/types';
import { errorCode, errorMessage } from '../providers/aws-errors';
import type { CapacityReservation, CapacityReservationProvider } from '../providers/capacityreservation';
import type { PlacementGroup, PlacementGroupProvider } from '../providers/placementgroup';

export const CONDITION_CAPACITY_RESERVATIONS_READY = 'CapacityReservationsReady';
export const CONDITION_PLACEMENT_GROUP_READY = 'PlacementGroupReady';

export type Outcome = Pick<Condition, 'status' | 'reason' | 'message'>;

export interface PlacementDeps {
  capacityReservations?: Pick<CapacityReservationProvider, 'list'>;
  placementGroups?: Pick<PlacementGroupProvider, 'get'>;
}

function described(error: unknown): string {
  const code = errorCode(error);
  return `${code ? `${code}: ` : ''}${errorMessage(error)}`;
}

export interface ReservationsResult {
  outcome?: Outcome;
  reservations: CapacityReservation[];
}

/** Reservations of the node class; no outcome when it selects none (the condition is left out). */
export async function resolveCapacityReservations(
  spec: EC2NodeClassSpec,
  deps: PlacementDeps,
): Promise<ReservationsResult> {
  const terms = spec.capacityReservationSelectorTerms ?? [];
  if (terms.length === 0) return { reservations: [] };
  if (!deps.capacityReservations) {
    return {
      outcome: { status: 'Unknown', reason: 'NotResolved', message: 'capacity reservations were not looked up' },
      reservations: [],
    };
  }
  try {
    const { reservations, skipped } = await deps.capacityReservations.list(terms);
    // Zero reservations is ready, as in Karpenter: the node class launches spot or on-demand.
    const note = skipped.map((s) => `${s.id}: ${s.reason}`).join('; ');
    return {
      outcome: {
        status: 'True',
        reason: CONDITION_CAPACITY_RESERVATIONS_READY,
        ...(note ? { message: `skipped ${note}` } : {}),
      },
      reservations,
    };
  } catch (error) {
    return {
      outcome: {
        status: 'Unknown',
        reason: 'ResolutionFailed',
        message: `spec.capacityReservationSelectorTerms: ${described(error)}`,
      },
      reservations: [],
    };
  }
}

export interface PlacementGroupResult {
  outcome?: Outcome;
  placementGroup?: PlacementGroup;
}

/** The node class's placement group; no outcome when it names none. */
export async function resolvePlacementGroup(
  spec: EC2NodeClassSpec,
  deps: PlacementDeps,
): Promise<PlacementGroupResult> {
  const selector = spec.placementGroupSelector;
  if (!selector) return {};
  const named = selector.name ?? selector.id ?? '';
  if (!deps.placementGroups) {
    return { outcome: { status: 'Unknown', reason: 'NotResolved', message: 'the placement group was not looked up' } };
  }
  try {
    const group = await deps.placementGroups.get(selector);
    if (!group) {
      return {
        outcome: {
          status: 'False',
          reason: 'PlacementGroupNotFound',
          message: `spec.placementGroupSelector: placement group "${named}" not found; create it or fix the ${selector.id ? 'id' : 'name'}`,
        },
      };
    }
    if (group.state !== 'available') {
      return {
        outcome: {
          status: 'False',
          reason: 'PlacementGroupNotAvailable',
          message: `spec.placementGroupSelector: placement group "${named}" is in state "${group.state}", expected "available"`,
        },
      };
    }
    return { outcome: { status: 'True', reason: CONDITION_PLACEMENT_GROUP_READY }, placementGroup: group };
  } catch (error) {
    return {
      outcome: {
        status: 'False',
        reason: 'PlacementGroupResolutionFailed',
        message: `spec.placementGroupSelector: failed to resolve placement group "${named}": ${described(error)}`,
      },
    };
  }
}

/** status.capacityReservations and status.placementGroups as Karpenter writes them. */
export function placementStatus(
  reservations: readonly CapacityReservation[],
  group: PlacementGroup | undefined,
): Pick<EC2NodeClassStatus, 'capacityReservations' | 'placementGroups'> {
  return {
    ...(reservations.length > 0
      ? {
          capacityReservations: reservations.map((r) => ({
            id: r.id,
            availabilityZone: r.availabilityZone,
            instanceType: r.instanceType,
            ownerID: r.ownerID,
            instanceMatchCriteria: r.instanceMatchCriteria,
            reservationType: r.reservationType,
            ...(r.interruptible ? { interruptible: true } : {}),
            state: r.state,
            ...(r.endTime ? { endTime: r.endTime } : {}),
          })),
        }
      : {}),
    ...(group
      ? {
          placementGroups: [
            {
              id: group.id,
              name: group.name,
              strategy: group.strategy,
              state: group.state,
              ...(group.partitionCount !== undefined ? { partitionCount: group.partitionCount } : {}),
            },
          ],
        }
      : {}),
  };
}
