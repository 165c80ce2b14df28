// What the fake API server serves, as discovery reports it: each resource's group, version, kind,
// scope, short names and verbs. The built-in resources are fixed; custom resources join when their
// CustomResourceDefinition is installed (installCustomResources), as on a real API server, so a
// cluster without Karpenter's CRDs has no karpenter.sh group at all.

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
  description?: string;
}

export interface ResourceInfo {
  /** The plural, as in the path: `nodeclaims`. */
  resource: string;
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  /** A custom resource's printer columns (its CRD's additionalPrinterColumns). */
  columns?: PrinterColumn[];
  /** The CRD declares a status subresource: writes to the object leave status alone. */
  statusSubresource?: boolean;
  /** Served from a CRD: the API server counts its spec changes in metadata.generation. */
  custom?: boolean;
}

const READ = ['get', 'list', 'watch'];
const ALL = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

const BUILT_IN: ResourceInfo[] = [
  {
    resource: 'pods',
    group: '',
    version: 'v1',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    verbs: ['delete', ...READ],
  },
  {
    resource: 'nodes',
    group: '',
    version: 'v1',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    verbs: ['delete', 'patch', ...READ],
  },
  {
    resource: 'events',
    group: '',
    version: 'v1',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    verbs: ALL,
  },
  {
    resource: 'persistentvolumeclaims',
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    singular: 'persistentvolumeclaim',
    namespaced: true,
    shortNames: ['pvc'],
    verbs: READ,
  },
  {
    resource: 'persistentvolumes',
    group: '',
    version: 'v1',
    kind: 'PersistentVolume',
    singular: 'persistentvolume',
    namespaced: false,
    shortNames: ['pv'],
    verbs: READ,
  },
  {
    resource: 'daemonsets',
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    singular: 'daemonset',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    verbs: READ,
  },
  {
    resource: 'storageclasses',
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'StorageClass',
    singular: 'storageclass',
    namespaced: false,
    shortNames: ['sc'],
    verbs: READ,
  },
  {
    resource: 'volumeattachments',
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'VolumeAttachment',
    singular: 'volumeattachment',
    namespaced: false,
    verbs: ['create', ...READ],
  },
  {
    resource: 'leases',
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    verbs: READ,
  },
  {
    resource: 'customresourcedefinitions',
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    singular: 'customresourcedefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    verbs: ALL,
  },
];

/** The subset of a CustomResourceDefinition the fake API server reads. */
export interface CustomResourceDefinition {
  metadata: { name: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { plural: string; singular?: string; kind: string; shortNames?: string[]; categories?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: unknown };
      additionalPrinterColumns?: PrinterColumn[];
    }[];
  };
}

export class ResourceRegistry {
  private readonly resources = new Map<string, ResourceInfo>();

  constructor() {
    for (const info of BUILT_IN) this.resources.set(info.resource, info);
  }

  get(resource: string): ResourceInfo | undefined {
    return this.resources.get(resource);
  }

  /** The resource a path's group, version and plural name, if served. */
  find(group: string, version: string, resource: string): ResourceInfo | undefined {
    const info = this.resources.get(resource);
    return info && info.group === group && info.version === version ? info : undefined;
  }

  all(): ResourceInfo[] {
    return [...this.resources.values()];
  }

  isCustom(resource: string): boolean {
    return this.resources.get(resource)?.columns !== undefined;
  }

  /** Serves every served version of a CRD (the fake keeps one version per plural: the storage one). */
  install(crd: CustomResourceDefinition): ResourceInfo {
    const { group, names, scope, versions } = crd.spec;
    const version = versions.find((v) => v.served && v.storage) ?? versions.find((v) => v.served);
    if (!version) throw new Error(`fake API server: CRD ${crd.metadata.name} serves no version`);
    const info: ResourceInfo = {
      resource: names.plural,
      group,
      version: version.name,
      kind: names.kind,
      singular: names.singular ?? names.kind.toLowerCase(),
      namespaced: scope === 'Namespaced',
      verbs: ALL,
      columns: version.additionalPrinterColumns ?? [],
      statusSubresource: version.subresources?.status !== undefined,
      custom: true,
    };
    if (names.shortNames) info.shortNames = names.shortNames;
    if (names.categories) info.categories = names.categories;
    this.resources.set(names.plural, info);
    return info;
  }

  uninstall(plural: string): void {
    if (this.isCustom(plural)) this.resources.delete(plural);
  }
}

export function apiVersionOf(info: Pick<ResourceInfo, 'group' | 'version'>): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}
