// Builds the Provisioner in a fresh app for template assertions. Bundling is skipped (the
// aws:cdk:bundling-stacks context), so tests need no esbuild run and stay fast.

import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Provisioner, type ProvisionerProps } from '../../infra/provisioner';

export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

export function synthProvisioner(
  props: Partial<ProvisionerProps> | ((stack: Stack) => Partial<ProvisionerProps>) = {},
): {
  stack: Stack;
  provisioner: Provisioner;
  template: Template;
} {
  const app = new App({ context: NO_BUNDLING });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'us-west-2' } });
  const provisioner = new Provisioner(stack, 'Provisioner', {
    clusterName: 'demo',
    manifests: ['examples/manifests'],
    ...(typeof props === 'function' ? props(stack) : props),
  });
  return { stack, provisioner, template: Template.fromStack(stack) };
}

type Resource = { Type: string; Properties: Record<string, unknown> };

/** Every IAM statement attached to the role of the function whose logical id starts with `prefix`. */
export function statementsOf(template: Template, functionId: string): Record<string, unknown>[] {
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const fn = Object.entries(resources).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(`Provisioner${functionId}`),
  );
  if (!fn) throw new Error(`no function ${functionId}`);
  const roleRef = (fn[1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .filter((r) => (r.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === roleRef))
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement);
}

export function actionsOf(statements: readonly Record<string, unknown>[]): Set<string> {
  return new Set(statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]) as string[]));
}

let defaultTemplate: Template | undefined;

/** The template of the default Provisioner (examples/manifests), synthesized once per test file. */
export function exampleTemplate(): Template {
  defaultTemplate ??= synthProvisioner().template;
  return defaultTemplate;
}
