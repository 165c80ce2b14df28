// The `-c` context values of the operational props: `reservedConcurrency=false` and
// `noticeProducers=ARN,ARN`. A value that cannot mean anything fails synth naming the key.

import type { Node } from 'constructs';
import type { ProvisionerProps } from './provisioner';

export type OperationsContext = Pick<ProvisionerProps, 'reservedConcurrency' | 'noticeProducers'>;

function booleanContext(node: Node, key: string): boolean | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${key} is ${JSON.stringify(value)}: use -c ${key}=true or -c ${key}=false`);
}

function listContext(node: Node, key: string): string[] | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

export function operationsContext(node: Node): OperationsContext {
  const reservedConcurrency = booleanContext(node, 'reservedConcurrency');
  const noticeProducers = listContext(node, 'noticeProducers');
  return {
    ...(reservedConcurrency !== undefined ? { reservedConcurrency } : {}),
    ...(noticeProducers !== undefined ? { noticeProducers } : {}),
  };
}
