// Discovery as kubectl reads it: /version, /api, /apis and one APIResourceList per group version,
// built from the registry, so a custom resource shows up exactly when its CRD is installed. kubectl
// asks for aggregated discovery first and falls back to these legacy documents, which is all the
// fake serves. OpenAPI documents are not served (kubectl apply then needs --validate=false).

import { apiVersionOf, type ResourceInfo, type ResourceRegistry } from './resources';

/** The Kubernetes minor version the fake answers as (EKS's current default). */
export const FAKE_SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-karpless-fake' };

/** Groups served outside the registry (routes of their own). */
const EXTRA_GROUPS: { group: string; version: string; resources: ResourceInfo[] }[] = [
  {
    group: 'policy',
    version: 'v1',
    resources: [
      {
        resource: 'poddisruptionbudgets',
        group: 'policy',
        version: 'v1',
        kind: 'PodDisruptionBudget',
        singular: 'poddisruptionbudget',
        namespaced: true,
        shortNames: ['pdb'],
        verbs: ['list'],
      },
    ],
  },
];

/** The discovery document for a path, or undefined when the path is not a discovery path. */
export function discovery(pathname: string, registry: ResourceRegistry, host: string): unknown {
  const path = pathname.replace(/\/+$/, '');
  if (path === '/version') {
    return { ...FAKE_SERVER_VERSION, goVersion: 'go1.23', compiler: 'gc', platform: 'linux/amd64' };
  }
  const served = [...registry.all(), ...EXTRA_GROUPS.flatMap((g) => g.resources)];
  if (path === '/api') {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }],
    };
  }
  if (path === '/apis') {
    const groups = new Map<string, string>();
    for (const info of served) if (info.group !== '') groups.set(info.group, info.version);
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, version]) => {
        const preferred = { groupVersion: `${name}/${version}`, version };
        return { name, versions: [preferred], preferredVersion: preferred };
      }),
    };
  }
  const group = /^\/apis\/([^/]+)$/.exec(path);
  if (group) {
    const info = served.find((r) => r.group === group[1]);
    if (!info) return undefined;
    const preferred = { groupVersion: apiVersionOf(info), version: info.version };
    return { kind: 'APIGroup', apiVersion: 'v1', name: info.group, versions: [preferred], preferredVersion: preferred };
  }
  const version = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!version) return undefined;
  const [, coreVersion, groupName = '', groupVersion] = version;
  const wanted = coreVersion ?? groupVersion ?? '';
  const resources = served.filter((r) => r.group === groupName && r.version === wanted);
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group: groupName, version: wanted }),
    resources: resources.flatMap((r) => {
      const entry: Record<string, unknown> = {
        name: r.resource,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.verbs,
      };
      if (r.shortNames) entry.shortNames = r.shortNames;
      if (r.categories) entry.categories = r.categories;
      const status = r.statusSubresource
        ? [
            {
              name: `${r.resource}/status`,
              singularName: '',
              namespaced: r.namespaced,
              kind: r.kind,
              verbs: ['get', 'patch', 'update'],
            },
          ]
        : [];
      return [entry, ...status];
    }),
  };
}
