// AMI families as the EC2NodeClass API names them: the alias families and how a node class resolves
// to one. Validation, the catalog (pod density, overhead), userData and the AMI provider all ask.

import type { AMIFamily, EC2NodeClass } from './types';

export type AliasFamily = Exclude<AMIFamily, 'Custom'>;

/** Alias family (the lower-case text before the first `@`) → canonical family name. */
export const ALIAS_FAMILIES: Readonly<Record<string, AliasFamily>> = {
  al2: 'AL2',
  al2023: 'AL2023',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows2019',
  windows2022: 'Windows2022',
  windows2025: 'Windows2025',
};

/** The family named by an alias such as `al2023@latest`, or undefined for an unknown one. */
export function amiFamilyFromAlias(alias: string): AliasFamily | undefined {
  const at = alias.indexOf('@');
  return ALIAS_FAMILIES[(at < 0 ? alias : alias.slice(0, at)).toLowerCase()];
}

/**
 * The family whose userData and defaults apply, as Karpenter resolves it: spec.amiFamily when set (it
 * may be Custom beside an alias), else the alias family. Undefined when neither is given, which
 * validation reports.
 */
export function resolveAMIFamily(nodeClass: EC2NodeClass): AMIFamily | undefined {
  if (nodeClass.spec.amiFamily !== undefined) return nodeClass.spec.amiFamily;
  for (const term of nodeClass.spec.amiSelectorTerms ?? []) {
    const family = term.alias === undefined ? undefined : amiFamilyFromAlias(term.alias);
    if (family) return family;
  }
  return undefined;
}
