// Security groups selected by an EC2NodeClass (AWS pkg/providers/securitygroup): id, name (the
// group name, not the Name tag) or tags per term, unioned.

import type { Filter } from '@aws-sdk/client-ec2';
import type { SecurityGroupSelectorTerm } from '../apis/v1/types';
import { tagFilters } from './filters';
import type { EC2Api } from './ports';

export type SecurityGroupPort = Pick<EC2Api, 'describeSecurityGroups'>;

export interface SecurityGroup {
  id: string;
  name?: string;
}

export function securityGroupTermFilters(term: SecurityGroupSelectorTerm): Filter[] {
  const filters: Filter[] = [];
  if (term.id) filters.push({ Name: 'group-id', Values: [term.id] });
  if (term.name) filters.push({ Name: 'group-name', Values: [term.name] });
  filters.push(...tagFilters(term.tags));
  return filters;
}

export class SecurityGroupProvider {
  constructor(private readonly ec2: SecurityGroupPort) {}

  async list(terms: readonly SecurityGroupSelectorTerm[]): Promise<SecurityGroup[]> {
    const byId = new Map<string, SecurityGroup>();
    for (const term of terms) {
      const filters = securityGroupTermFilters(term);
      if (filters.length === 0) continue;
      let token: string | undefined;
      do {
        const page = await this.ec2.describeSecurityGroups({
          Filters: filters,
          ...(token ? { NextToken: token } : {}),
        });
        for (const g of page.SecurityGroups ?? []) {
          if (g.GroupId) byId.set(g.GroupId, { id: g.GroupId, ...(g.GroupName ? { name: g.GroupName } : {}) });
        }
        token = page.NextToken;
      } while (token);
    }
    return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
}
