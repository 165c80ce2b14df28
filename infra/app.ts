// The CDK app. Configuration is validated at synth time so that a bad manifest fails `cdk synth` /
// `cdk deploy` with the file, object and field, never later inside a Lambda.
// Manifests come from the context key `karpless:manifests` (comma-separated FILE|DIR list).

import { App, Stack } from 'aws-cdk-lib';
import { loadDeployConfiguration } from './configuration';

const app = new App();
const manifests = String(app.node.tryGetContext('karpless:manifests') ?? 'examples/manifests');
const configuration = loadDeployConfiguration(manifests.split(',').filter((p) => p.length > 0));
const stack = new Stack(app, 'Karpless', { description: 'karpless: Karpenter v1 node provisioning from AWS Lambda' });
stack.templateOptions.metadata = {
  karpless: {
    nodePools: configuration.nodePools.map((p) => p.metadata.name),
    nodeClasses: configuration.nodeClasses.map((c) => c.metadata.name),
  },
};
app.synth();
