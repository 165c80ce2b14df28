// A configuration read from the cluster (NodePool and EC2NodeClass objects, applied with kubectl,
// Argo CD or Flux) instead of the bundled document: validated exactly as the bundled path is
// (./configuration), object by object, so that one bad object costs only itself. An object that
// fails validation keeps serving its last valid version (when there is one): a typo pushed by GitOps
// must not take a NodePool's capacity away. Pure: reading and caching are shared/runtime's.

import { type Configuration, validateConfiguration } from './configuration';
import type { Problem } from './problems';
import { isObject } from './v1/schema';
import { type EC2NodeClass, NODECLASS_API_VERSION, NODEPOOL_API_VERSION, type NodePool } from './v1/types';

/** An object as the API server returns it (only what configuration reads of it). */
export interface ClusterObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: unknown;
}

/** The last valid version of each object by name: what serves while the object in the cluster is invalid. */
export interface LastValid {
  nodePools: Map<string, NodePool>;
  nodeClasses: Map<string, EC2NodeClass>;
}

export interface InvalidObject {
  kind: 'NodePool' | 'EC2NodeClass';
  name: string;
  /** Errors, each naming the field (`spec.disruption.budgets[0].nodes: …`). */
  problems: Problem[];
  /** Its last valid version serves in its place. */
  serving: 'last-valid' | 'nothing';
}

export interface ClusterConfigurationResult {
  config: Configuration;
  invalid: InvalidObject[];
  /** NodePools left out because their EC2NodeClass is not in the cluster (Karpenter: NodeClassReady=False). */
  withoutNodeClass: string[];
  /**
   * EC2NodeClasses being deleted (left out, as Karpenter launches nothing for them: NodeClassTerminating)
   * with the NodePools that name them, which therefore launch nothing either.
   */
  terminating: { nodeClass: string; nodePools: string[] }[];
  /** The last valid versions after this read (objects gone from the cluster are forgotten). */
  lastValid: LastValid;
}

const SOURCE = 'cluster';

/** Seeds the last valid versions from a configuration, e.g. the bundled one after a cold start. */
export function lastValidOf(config: Configuration): LastValid {
  return {
    nodePools: new Map(config.nodePools.map((p) => [p.metadata.name, p])),
    nodeClasses: new Map(config.nodeClasses.map((c) => [c.metadata.name, c])),
  };
}

/**
 * The objects as configuration: only what the user wrote (server-set metadata and status are left
 * out), objects being deleted left out (Karpenter provisions from none), each validated with its
 * kind's rules and the cross-object ones (a NodePool's nodeClassRef names an EC2NodeClass).
 */
export function resolveClusterConfiguration(input: {
  nodePools: readonly ClusterObject[];
  nodeClasses: readonly ClusterObject[];
  lastValid: LastValid;
}): ClusterConfigurationResult {
  const nodeClasses = input.nodeClasses.filter(live).map((o) => userObject(o, 'EC2NodeClass', NODECLASS_API_VERSION));
  const terminating = input.nodeClasses
    .filter((o) => !live(o))
    .map((o) => ({
      nodeClass: o.metadata.name,
      nodePools: input.nodePools
        .filter((p) => live(p) && nodeClassRefName(p) === o.metadata.name)
        .map((p) => p.metadata.name)
        .sort(),
    }));
  const classNames = new Set(nodeClasses.map((c) => c.metadata.name));
  const withoutNodeClass: string[] = [];
  const nodePools = input.nodePools
    .filter(live)
    .map((o) => userObject(o, 'NodePool', NODEPOOL_API_VERSION))
    .filter((pool) => {
      // A NodePool naming no EC2NodeClass object is not invalid: it waits for its class, as in Karpenter.
      const ref = nodeClassRefName(pool);
      if (ref === undefined || classNames.has(ref)) return true;
      withoutNodeClass.push(pool.metadata.name);
      return false;
    });
  const documents = [...nodeClasses, ...nodePools].map((object) => ({
    file: SOURCE,
    line: 0,
    object: object as unknown as Record<string, unknown>,
  }));
  // userData is rendered again at launch, which reports a bad template on the claim; the functions
  // that read configuration do not all carry the renderers.
  const validated = validateConfiguration(documents, { strictReferences: true }, () => []);
  const errors = new Map<string, Problem[]>();
  for (const problem of validated.problems) {
    if (problem.severity !== 'error' || problem.object === undefined) continue;
    // The object is named by where the problem is shown (its own status, its event).
    const { file: _, object: __, ...rest } = problem;
    errors.set(problem.object, [...(errors.get(problem.object) ?? []), rest]);
  }
  const invalid: InvalidObject[] = [];
  const lastValid: LastValid = { nodePools: new Map(), nodeClasses: new Map() };
  const config: Configuration = { nodePools: [], nodeClasses: [] };
  const pick = <T extends NodePool | EC2NodeClass>(
    kind: InvalidObject['kind'],
    objects: readonly ClusterObject[],
    valid: readonly T[],
    previous: Map<string, T>,
    next: Map<string, T>,
    out: T[],
  ) => {
    for (const object of objects) {
      const name = object.metadata.name;
      const problems = errors.get(`${kind}/${name}`);
      const fresh = problems === undefined ? valid.find((v) => v.metadata.name === name) : undefined;
      const serving = fresh ?? previous.get(name);
      if (problems !== undefined || fresh === undefined) {
        invalid.push({ kind, name, problems: problems ?? [], serving: serving ? 'last-valid' : 'nothing' });
      }
      if (serving) {
        next.set(name, serving);
        out.push(serving);
      }
    }
  };
  pick(
    'EC2NodeClass',
    nodeClasses,
    validated.config.nodeClasses,
    input.lastValid.nodeClasses,
    lastValid.nodeClasses,
    config.nodeClasses,
  );
  pick(
    'NodePool',
    nodePools,
    validated.config.nodePools,
    input.lastValid.nodePools,
    lastValid.nodePools,
    config.nodePools,
  );
  // An EC2NodeClass invalid since it was first seen serves nothing, so neither do its NodePools.
  const served = new Set(config.nodeClasses.map((c) => c.metadata.name));
  config.nodePools = config.nodePools.filter((pool) => {
    if (served.has(pool.spec.template.spec.nodeClassRef.name)) return true;
    withoutNodeClass.push(pool.metadata.name);
    return false;
  });
  return { config, invalid, withoutNodeClass, terminating, lastValid };
}

/** The problems of one object as the cluster path finds them, for its status and events. */
export function clusterObjectProblems(
  kind: InvalidObject['kind'],
  object: ClusterObject,
  nodeClasses: readonly ClusterObject[] = [],
): Problem[] {
  const result = resolveClusterConfiguration({
    nodePools: kind === 'NodePool' ? [object] : [],
    nodeClasses: kind === 'NodePool' ? nodeClasses : [object],
    lastValid: { nodePools: new Map(), nodeClasses: new Map() },
  });
  return result.invalid.find((i) => i.kind === kind && i.name === object.metadata.name)?.problems ?? [];
}

function live(object: ClusterObject): boolean {
  return object.metadata.deletionTimestamp === undefined;
}

/**
 * What the user wrote: apiVersion, kind, name, labels, annotations and spec. The list an object
 * came from says its kind (a list's items need not repeat apiVersion and kind).
 */
function userObject(object: ClusterObject, kind: string, apiVersion: string): ClusterObject {
  const { name, labels, annotations } = object.metadata;
  return {
    apiVersion: object.apiVersion ?? apiVersion,
    kind: object.kind ?? kind,
    metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    ...(object.spec !== undefined ? { spec: object.spec } : {}),
  };
}

function nodeClassRefName(pool: ClusterObject): string | undefined {
  const spec = pool.spec;
  if (!isObject(spec) || !isObject(spec.template) || !isObject(spec.template.spec)) return undefined;
  const ref = spec.template.spec.nodeClassRef;
  return isObject(ref) && typeof ref.name === 'string' ? ref.name : undefined;
}
