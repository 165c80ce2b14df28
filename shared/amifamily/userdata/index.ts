// userData per AMI family (Karpenter's bootstrap package): pure text in, text out.
// CONTRACT (consumed by the launch providers): UserDataInput, renderUserData, UserDataError.

import type { AMIFamily } from '../../apis/v1/types';
import type { CapacityType } from '../../instancetypes/types';
import { MimeParseError } from '../mime';
import { renderAL2 } from './al2';
import { MissingClusterCIDRError, renderAL2023 } from './al2023';
import { BottlerocketSettingsError, renderBottlerocket } from './bottlerocket';
import { KubeletFieldError, nodeLabels, nodeTaints } from './options';
import type { FamilyInput } from './types';
import { renderWindows } from './windows';

export { droppedKubernetesSettings, supportsDefaultBind } from './bottlerocket';
export { isRestrictedNodeLabel, nodeLabels, nodeTaints, UNREGISTERED_TAINT } from './options';

/** What the launch path gives: the family input plus the family and capacity type that shape it. */
export interface UserDataInput extends FamilyInput {
  /** Resolved family (the alias family, or spec.amiFamily). */
  family: AMIFamily;
  capacityType: CapacityType;
}

/**
 * The node class's settings cannot become a working userData. `field` is the EC2NodeClass field at
 * fault (spec.userData, spec.kubelet.…); the message says what is wrong and what to do.
 */
export class UserDataError extends Error {
  override readonly name = 'UserDataError';
  readonly field: string;
  readonly reason: string;
  /** `new UserDataError(field, reason)`, or `new UserDataError(reason)` for spec.userData. */
  constructor(fieldOrReason: string, reason?: string) {
    const field = reason === undefined ? 'spec.userData' : fieldOrReason;
    const why = reason ?? fieldOrReason;
    super(`${field}: ${why}`);
    this.field = field;
    this.reason = why;
  }
}

/** Userdata larger than this (decoded) is refused by EC2. */
export const MAX_USER_DATA_BYTES = 16384;

/** The decoded userData text for one launch template; throws UserDataError. */
export function renderUserData(input: UserDataInput): string {
  if (input.family === 'Custom') return input.customUserData ?? '';
  const familyInput: FamilyInput = {
    clusterName: input.clusterName,
    clusterEndpoint: input.clusterEndpoint,
    caBundle: input.caBundle,
    kubelet: input.kubelet,
    taints: nodeTaints(input.taints),
    labels: nodeLabels(input.family, input.labels, input.capacityType),
    ...(input.clusterCIDR !== undefined ? { clusterCIDR: input.clusterCIDR } : {}),
    ...(input.instanceStorePolicy !== undefined ? { instanceStorePolicy: input.instanceStorePolicy } : {}),
    ...(input.customUserData !== undefined ? { customUserData: input.customUserData } : {}),
    ...(input.bottlerocketVersion !== undefined ? { bottlerocketVersion: input.bottlerocketVersion } : {}),
  };
  try {
    switch (input.family) {
      case 'AL2':
        return renderAL2(familyInput);
      case 'AL2023':
        return renderAL2023(familyInput);
      case 'Bottlerocket':
        return renderBottlerocket(familyInput);
      case 'Windows2019':
      case 'Windows2022':
      case 'Windows2025':
        return renderWindows(familyInput);
    }
  } catch (error) {
    throw asUserDataError(input.family, error);
  }
  throw new UserDataError('spec.amiFamily', `unknown AMI family "${String(input.family)}"`);
}

function asUserDataError(family: AMIFamily, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UserDataError) return error;
  if (error instanceof KubeletFieldError) return new UserDataError(error.field, error.message);
  if (error instanceof MimeParseError) {
    return new UserDataError(
      'spec.userData',
      `looks like a MIME multipart archive but cannot be parsed (${message}); fix the archive or give a plain script`,
    );
  }
  if (error instanceof BottlerocketSettingsError) {
    return new UserDataError('spec.userData', `${family} userData must be TOML settings: ${message}`);
  }
  if (error instanceof MissingClusterCIDRError) {
    return new UserDataError(
      'cluster',
      'AL2023 needs the cluster service CIDR (resolving cluster CIDR); pass --cluster-cidr or check DescribeCluster',
    );
  }
  return new UserDataError('userData', message);
}
