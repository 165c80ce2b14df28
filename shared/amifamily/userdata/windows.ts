// Windows: one PowerShell script, the user's lines first; no MIME.

import { kubeletExtraArgs } from './options';
import { powerShellQuote } from './quote';
import type { FamilyInput } from './types';

export function renderWindows(input: FamilyInput): string {
  let script = '<powershell>\n';
  if (input.customUserData) script += `${input.customUserData}\n`;
  script += '[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"\n';
  script += `& $EKSBootstrapScriptFile -EKSClusterName ${powerShellQuote(input.clusterName)} -APIServerEndpoint ${powerShellQuote(input.clusterEndpoint)}`;
  script += ` -Base64ClusterCA ${powerShellQuote(input.caBundle)}`;
  const args = kubeletExtraArgs(input.labels, input.taints, input.kubelet);
  if (args.length > 0) script += ` -KubeletExtraArgs ${powerShellQuote(args.join(' '))}`;
  const dns = input.kubelet.clusterDNS?.[0];
  if (dns !== undefined) script += ` -DNSClusterIP ${powerShellQuote(dns)}`;
  return `${script}\n</powershell>`;
}
