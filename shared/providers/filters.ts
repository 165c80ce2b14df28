// Selector-term tags → EC2 filters: a `*` value matches any value, so it becomes a tag-key filter.

import type { Filter } from '@aws-sdk/client-ec2';

export function tagFilters(tags: Record<string, string> | undefined): Filter[] {
  return Object.entries(tags ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) =>
      value === '*' ? { Name: 'tag-key', Values: [key] } : { Name: `tag:${key}`, Values: [value] },
    );
}

export function tagsToRecord(tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined) {
  const record: Record<string, string> = {};
  for (const tag of tags ?? []) if (tag.Key !== undefined) record[tag.Key] = tag.Value ?? '';
  return record;
}
