// AMIs selected by an EC2NodeClass (AWS pkg/providers/amifamily/ami.go): an alias goes through the
// public SSM parameters for the cluster's Kubernetes version (alias.ts); other terms go through
// DescribeImages (state=available, deprecated included). One AMI is kept per requirement set,
// current before deprecated, then newest first.

import type { DescribeImagesCommandInput, Filter, Image } from '@aws-sdk/client-ec2';
import { aliasParameters, archLabel, WINDOWS_BUILDS } from '../amifamily/alias';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import { LABEL_ARCH, LABEL_OS, LABEL_WINDOWS_BUILD } from '../apis/v1/labels';
import type { AMISelectorTerm, EC2NodeClass, NodeSelectorRequirementWithMinValues } from '../apis/v1/types';
import type { ResolvedAMI } from '../launch/launchtemplate';
import { isNotFound } from './aws-errors';
import { type Clock, systemClock, TTLCache } from './clock';
import { tagFilters } from './filters';
import type { EC2Api, SSMApi } from './ports';

export type AMIPort = Pick<EC2Api, 'describeImages'>;
export type SSMPort = Pick<SSMApi, 'getParameter'>;

/** SSMCacheTTL: public alias parameters change rarely and are invalidated on deprecation upstream. */
export const SSM_CACHE_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * The provision function's alias TTL. Karpenter keeps alias values 24 h because its SSM-invalidation
 * controller drops them early when a release deprecates the AMI; karpless runs no such controller,
 * so a warm provision function would launch the previous release for up to a day, nodes the drift
 * function (which resolves afresh each run) would replace at once. Its default interval is this.
 */
export const PROVISION_ALIAS_TTL_MS = 5 * 60 * 1000;
/** Custom ssmParameter terms are the user's, and may be repointed at any time. */
export const CUSTOM_SSM_CACHE_TTL_MS = 5 * 60 * 1000;

interface ImageQuery {
  input: DescribeImagesCommandInput;
  /** Alias queries: image id → the requirement sets of the variants whose parameter named it. */
  variants?: Map<string, NodeSelectorRequirementWithMinValues[][]>;
}

function requirementsKey(requirements: readonly NodeSelectorRequirementWithMinValues[]): string {
  return JSON.stringify(
    requirements
      .map((r) => [r.key, r.operator, [...(r.values ?? [])].sort()])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]))),
  );
}

/** Non-deprecated first, then newest, then the lexically larger name (Karpenter's order). */
function better(a: ResolvedAMI, b: ResolvedAMI): boolean {
  if (Boolean(a.deprecated) !== Boolean(b.deprecated)) return !a.deprecated;
  const ad = a.creationDate ?? '';
  const bd = b.creationDate ?? '';
  if (ad !== bd) return ad > bd;
  return (a.name ?? '') > (b.name ?? '');
}

export class AMIProvider {
  private readonly ssmCache: TTLCache<string>;

  /**
   * `aliasTtlMs`: how long an alias parameter's value is kept; Karpenter's 24 h unless a caller
   * needs a release sooner.
   */
  constructor(
    private readonly ec2: AMIPort,
    private readonly ssm: SSMPort,
    private readonly clock: Clock = systemClock,
    private readonly aliasTtlMs: number = SSM_CACHE_TTL_MS,
  ) {
    this.ssmCache = new TTLCache(clock, aliasTtlMs);
  }

  /**
   * The AMIs of a node class on a cluster running `k8sVersion` ("1.31"). Empty when nothing
   * matches; throws UnsupportedAliasError for an alias Karpenter refuses.
   */
  async resolve(nodeClass: EC2NodeClass, k8sVersion: string): Promise<ResolvedAMI[]> {
    const queries = await this.queries(nodeClass, k8sVersion);
    const family = resolveAMIFamily(nodeClass);
    const best = new Map<string, ResolvedAMI>();
    const now = this.clock();
    for (const query of queries) {
      for (const image of await this.describe(query.input)) {
        if (!image.ImageId) continue;
        // Deprecated AMIs stay usable (a term may match nothing else) but rank after current ones.
        const deprecated = image.DeprecationTime !== undefined && Date.parse(image.DeprecationTime) <= now;
        const own = imageRequirements(image, family);
        const sets = query.variants ? (query.variants.get(image.ImageId) ?? []) : own ? [own] : [];
        for (const requirements of sets) {
          const ami: ResolvedAMI = {
            id: image.ImageId,
            ...(image.Name ? { name: image.Name } : {}),
            requirements,
            ...(image.CreationDate ? { creationDate: image.CreationDate } : {}),
            ...(deprecated ? { deprecated: true } : {}),
          };
          const key = requirementsKey(requirements);
          const current = best.get(key);
          if (!current || better(ami, current)) best.set(key, ami);
        }
      }
    }
    return [...best.values()].sort(
      (a, b) =>
        Number(Boolean(a.deprecated)) - Number(Boolean(b.deprecated)) ||
        (b.creationDate ?? '').localeCompare(a.creationDate ?? '') ||
        a.id.localeCompare(b.id),
    );
  }

  private async queries(nodeClass: EC2NodeClass, k8sVersion: string): Promise<ImageQuery[]> {
    const terms = nodeClass.spec.amiSelectorTerms;
    const alias = terms.find((t) => t.alias)?.alias;
    if (alias) {
      const variants = new Map<string, NodeSelectorRequirementWithMinValues[][]>();
      for (const param of aliasParameters(alias, k8sVersion)) {
        const id = await this.parameter(param.name, this.aliasTtlMs);
        if (id?.startsWith('ami-')) variants.set(id, [...(variants.get(id) ?? []), param.requirements]);
      }
      if (variants.size === 0) return [];
      return [{ input: idQuery([...variants.keys()]), variants }];
    }
    const pinnedIds: string[] = terms.flatMap((t) => (t.id ? [t.id] : []));
    for (const term of terms) {
      if (!term.ssmParameter) continue;
      const id = await this.parameter(term.ssmParameter, CUSTOM_SSM_CACHE_TTL_MS);
      if (id?.startsWith('ami-')) pinnedIds.push(id);
    }
    const queries: ImageQuery[] = [];
    if (pinnedIds.length > 0) {
      queries.push({ input: idQuery([...new Set(pinnedIds)]) });
    }
    for (const term of terms) {
      const search = searchQuery(term);
      if (search) queries.push({ input: search });
    }
    return queries;
  }

  private async parameter(name: string, ttlMs: number): Promise<string | undefined> {
    const cached = this.ssmCache.get(name);
    if (cached !== undefined) return cached;
    try {
      const out = await this.ssm.getParameter({ Name: name });
      const value = out.Parameter?.Value;
      if (value) this.ssmCache.set(name, value, ttlMs);
      return value;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private async describe(input: DescribeImagesCommandInput): Promise<Image[]> {
    const images: Image[] = [];
    let token: string | undefined;
    do {
      try {
        const page = await this.ec2.describeImages({
          ...input,
          MaxResults: 1000,
          ...(token ? { NextToken: token } : {}),
        });
        images.push(...(page.Images ?? []));
        token = page.NextToken;
      } catch (error) {
        if (isNotFound(error)) return images;
        throw error;
      }
    } while (token);
    return images;
  }
}

// Every query asks for available images, deprecated ones included (ranked last by resolve).
function idQuery(ids: string[]): DescribeImagesCommandInput {
  return {
    Filters: [
      { Name: 'state', Values: ['available'] },
      { Name: 'image-id', Values: ids },
    ],
    IncludeDeprecated: true,
  };
}

/** DescribeImages input for a name/tags/owner term; undefined for id/alias/ssmParameter terms. */
export function searchQuery(term: AMISelectorTerm): DescribeImagesCommandInput | undefined {
  if (term.id || term.alias || term.ssmParameter) return undefined;
  if (!term.name && !term.tags && !term.owner) return undefined;
  const filters: Filter[] = [{ Name: 'state', Values: ['available'] }];
  if (term.name) filters.push({ Name: 'name', Values: [term.name] });
  filters.push(...tagFilters(term.tags));
  const owners = term.owner ? [term.owner] : term.name ? ['self', 'amazon'] : undefined;
  return { Filters: filters, ...(owners ? { Owners: owners } : {}), IncludeDeprecated: true };
}

/** Requirements of an AMI found by id/name/tags: its architecture, and Windows OS/build for Windows families. */
export function imageRequirements(
  image: Pick<Image, 'Architecture'>,
  family: string | undefined,
): NodeSelectorRequirementWithMinValues[] | undefined {
  const arch = archLabel(image.Architecture ?? '');
  if (!arch) return undefined;
  const requirements: NodeSelectorRequirementWithMinValues[] = [{ key: LABEL_ARCH, operator: 'In', values: [arch] }];
  if (family === 'Windows2019' || family === 'Windows2022' || family === 'Windows2025') {
    requirements.push(
      { key: LABEL_OS, operator: 'In', values: ['windows'] },
      { key: LABEL_WINDOWS_BUILD, operator: 'In', values: [WINDOWS_BUILDS[family]] },
    );
  }
  return requirements;
}
