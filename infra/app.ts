// The CDK app: `npx cdk deploy -c cluster=NAME [-c manifests=DIR,…] [-c reservedConcurrency=false]
// [-c noticeProducers=ARN,…] [-c nodeRole=NAME|ARN] [-c nodeAccessEntries=false] [-c nodeRepair=true]`. Manifests are
// validated at synth, so a bad one fails `cdk synth` with file, object and field. Nothing is looked up in AWS:
// synth works offline and without credentials.

import { App } from 'aws-cdk-lib';
import { operationsContext } from './context';
import { buildKarplessApp } from './karpless-stack';

// Errors of these classes are bugs in karpless, not problems of the context or the manifests: their
// stack trace is what a report needs, so they are left to Node.
const INTERNAL_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

function synth(): void {
  // One App only: under the CDK CLI every App synthesizes itself on exit, and a second, empty one
  // would overwrite the stack's manifest.
  const app = new App();
  const context = app.node;
  const clusterName = context.tryGetContext('cluster');
  if (typeof clusterName !== 'string' || clusterName === '') {
    throw new Error('context cluster is not set: run `npx cdk deploy -c cluster=NAME` with your EKS cluster name');
  }
  // `karpless:manifests` is the key earlier cdk.json files used.
  const manifests = String(
    context.tryGetContext('manifests') ?? context.tryGetContext('karpless:manifests') ?? 'examples/manifests',
  );
  buildKarplessApp(
    { clusterName, manifests: manifests.split(',').filter((p) => p.length > 0), ...operationsContext(context) },
    app,
  ).app.synth();
}

try {
  synth();
} catch (error) {
  if (!(error instanceof Error) || INTERNAL_ERRORS.some((type) => error instanceof type)) throw error;
  // A wrong manifest or context value: its message names the file, object and field, and a stack
  // trace of the app would only bury it. process.exit, not exitCode: exiting normally would let
  // the half-built App synthesize itself.
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
