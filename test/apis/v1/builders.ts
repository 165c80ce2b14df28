// Minimal valid Karpenter v1 objects for tests, and a path setter so tables read like the field paths
// the validator reports.

export type Json = Record<string, unknown>;

export function nodePool(): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
        },
      },
    },
  };
}

export function nodeClass(): Json {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'KarpenterNodeRole-test',
      amiSelectorTerms: [{ alias: 'al2023@v20240807' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
    },
  };
}

export function nodeClaim(): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'general-abcde' },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
      resources: { requests: { cpu: '1', memory: '1Gi' } },
    },
  };
}

/**
 * Sets (or, with `undefined`, deletes) the value at a path like `spec.template.spec.requirements[0].key`.
 * Map keys containing dots go in brackets: `spec.tags[kubernetes.io/cluster/x]`. Missing objects are created.
 */
export function set(target: Json, path: string, value: unknown): Json {
  const parts = [...path.matchAll(/([^.[\]]+)|\[([^\]]+)\]/g)].map((m) => {
    const bracket = m[2];
    if (bracket !== undefined) return /^[0-9]+$/.test(bracket) ? Number(bracket) : bracket;
    return m[1] ?? '';
  });
  let node: Record<string | number, unknown> = target;
  parts.slice(0, -1).forEach((part, i) => {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = typeof parts[i + 1] === 'number' ? [] : {};
    node = node[part] as Record<string | number, unknown>;
  });
  const last = parts[parts.length - 1] ?? '';
  if (value === undefined) {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete node[last];
  } else {
    node[last] = value;
  }
  return target;
}

/** Applies several [path, value] pairs. */
export function setAll(target: Json, pairs: readonly (readonly [string, unknown])[]): Json {
  for (const [path, value] of pairs) set(target, path, value);
  return target;
}
