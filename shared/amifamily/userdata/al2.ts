// AL2: Karpenter's bootstrap.sh invocation as the last part of a MIME archive, after the user's parts.

import {
  BOUNDARY,
  CONTENT_TYPE_SHELL_SCRIPT,
  looksLikeMime,
  type MimePart,
  mimePart,
  parseMimeArchive,
  serializeMimeArchive,
} from '../mime';
import { isIPv6ClusterDNS, kubeletExtraArgs } from './options';
import { shellQuote } from './quote';
import type { FamilyInput } from './types';

export function al2Script(input: FamilyInput): string {
  const { kubelet } = input;
  let script = '#!/bin/bash -xe\n';
  script += 'exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n';
  // bootstrap.sh mis-parses "--flag=value", so every flag and value are separate words.
  script += `/etc/eks/bootstrap.sh ${shellQuote(input.clusterName)} --apiserver-endpoint ${shellQuote(input.clusterEndpoint)} --b64-cluster-ca ${shellQuote(input.caBundle)}`;
  if (isIPv6ClusterDNS(kubelet)) script += ' \\\n--ip-family ipv6';
  const dns = kubelet.clusterDNS?.[0];
  if (dns !== undefined) script += ` \\\n--dns-cluster-ip ${shellQuote(dns)}`;
  if (kubelet.maxPods !== undefined) script += ' \\\n--use-max-pods false';
  const args = kubeletExtraArgs(input.labels, input.taints, kubelet);
  if (args.length > 0) script += ` \\\n--kubelet-extra-args ${shellQuote(args.join(' '))}`;
  if (input.instanceStorePolicy === 'RAID0') script += ' \\\n--local-disks raid0';
  return script;
}

/** The user's userData as MIME parts: an archive is taken apart, anything else is one shell script. */
export function customParts(customUserData: string | undefined): MimePart[] {
  if (!customUserData) return [];
  if (looksLikeMime(customUserData)) return parseMimeArchive(customUserData);
  return [mimePart(CONTENT_TYPE_SHELL_SCRIPT, customUserData)];
}

export function renderAL2(input: FamilyInput): string {
  const parts = [...customParts(input.customUserData), mimePart(CONTENT_TYPE_SHELL_SCRIPT, al2Script(input))];
  return serializeMimeArchive(parts, BOUNDARY);
}
