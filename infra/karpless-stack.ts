// The stack the CDK app deploys: one Provisioner, cdk-nag's AwsSolutions checks on every synth, and
// the acknowledged findings. The app (infra/app.ts) and the tests build it the same way.

import { App, type AppProps, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { acknowledgeNagFindings, type NagAcknowledgement } from './nag';
import { Provisioner, type ProvisionerProps } from './provisioner';

export interface KarplessAppResult {
  app: App;
  stack: Stack;
  provisioner: Provisioner;
  acknowledgements: NagAcknowledgement[];
}

export function buildKarplessApp(
  props: Pick<ProvisionerProps, 'clusterName' | 'manifests'> & Partial<ProvisionerProps>,
  appOrProps: App | AppProps = {},
): KarplessAppResult {
  const app = appOrProps instanceof App ? appOrProps : new App(appOrProps);
  const stack = new Stack(app, stackName(props.clusterName), {
    description: `karpless: Karpenter v1 node provisioning from AWS Lambda for EKS cluster ${props.clusterName}`,
  });
  const provisioner = new Provisioner(stack, 'Provisioner', props);
  stack.templateOptions.metadata = {
    karpless: {
      nodePools: provisioner.configuration.nodePools.map((p) => p.metadata.name),
      nodeClasses: provisioner.configuration.nodeClasses.map((c) => c.metadata.name),
    },
  };
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const acknowledgements = acknowledgeNagFindings(provisioner);
  return { app, stack, provisioner, acknowledgements };
}

/**
 * `Karpless-<cluster>`. CloudFormation stack names take letters, digits and hyphens only, while an
 * EKS cluster name may have underscores: they become hyphens.
 */
export function stackName(clusterName: string): string {
  return `Karpless-${clusterName.replaceAll('_', '-')}`;
}
