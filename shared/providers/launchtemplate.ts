// Ensures launch templates exist (AWS pkg/providers/launchtemplate ensureLaunchTemplate): a name is
// the hash of everything that shapes the template, so an existing template of that name is reused,
// never duplicated. A short in-memory cache saves the Describe on repeated launches.

import type { CreateLaunchTemplateCommandInput } from '@aws-sdk/client-ec2';
import { errorCode, LAUNCH_TEMPLATE_ALREADY_EXISTS, LAUNCH_TEMPLATE_NOT_FOUND_CODES } from './aws-errors';
import { type Clock, systemClock, TTLCache } from './clock';
import type { EC2Api } from './ports';

export type LaunchTemplatePort = Pick<EC2Api, 'describeLaunchTemplates' | 'createLaunchTemplate'>;

/** Karpenter's launch template cache TTL. */
export const LAUNCH_TEMPLATE_CACHE_TTL_MS = 60 * 1000;

export interface EnsuredLaunchTemplate {
  name: string;
  id: string;
  /** True when this call created it. */
  created: boolean;
}

export class LaunchTemplateProvider {
  private readonly cache: TTLCache<string>;

  constructor(
    private readonly ec2: LaunchTemplatePort,
    clock: Clock = systemClock,
  ) {
    this.cache = new TTLCache(clock, LAUNCH_TEMPLATE_CACHE_TTL_MS);
  }

  async ensure(input: CreateLaunchTemplateCommandInput): Promise<EnsuredLaunchTemplate> {
    const name = input.LaunchTemplateName;
    if (!name) throw new Error('CreateLaunchTemplate input has no LaunchTemplateName');
    const cached = this.cache.get(name);
    if (cached) {
      this.cache.set(name, cached);
      return { name, id: cached, created: false };
    }
    const existing = await this.find(name);
    if (existing) {
      this.cache.set(name, existing);
      return { name, id: existing, created: false };
    }
    try {
      const out = await this.ec2.createLaunchTemplate(input);
      const id = out.LaunchTemplate?.LaunchTemplateId;
      if (!id) throw new Error(`CreateLaunchTemplate ${name} returned no id`);
      this.cache.set(name, id);
      return { name, id, created: true };
    } catch (error) {
      // A concurrent launch created the same template first; it is identical by construction.
      if (errorCode(error) !== LAUNCH_TEMPLATE_ALREADY_EXISTS) throw error;
      const id = await this.find(name);
      if (!id) throw error;
      this.cache.set(name, id);
      return { name, id, created: false };
    }
  }

  /** Forget a template EC2 reported missing, so the next ensure describes (and recreates) it. */
  invalidate(name: string): void {
    this.cache.delete(name);
  }

  private async find(name: string): Promise<string | undefined> {
    try {
      const out = await this.ec2.describeLaunchTemplates({ LaunchTemplateNames: [name] });
      const templates = out.LaunchTemplates ?? [];
      if (templates.length > 1)
        throw new Error(`expected one launch template named ${name}, found ${templates.length}`);
      return templates[0]?.LaunchTemplateId;
    } catch (error) {
      const code = errorCode(error);
      if (code && LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code)) return undefined;
      throw error;
    }
  }
}
