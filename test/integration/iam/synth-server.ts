// Synthesizes the karpless stack (offline, no bundling) for the cluster name and configuration a test
// runs with, so each function's role is the one `cdk deploy` would create for that test's manifests.
// It runs in the integration project's global setup, where aws-cdk-lib is imported once (seconds)
// instead of once per test file, and answers the test workers over 127.0.0.1 (POST /synth with
// {clusterName, configuration}, the template JSON back). Templates are cached per cluster name and
// node classes (cacheKey).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FunctionNetworkProps } from '../../../infra/network';
import type { Configuration } from '../../../shared/apis/configuration';

export interface SynthRequest {
  clusterName: string;
  configuration: Configuration;
  /** As `-c vpc=… -c subnets=…`: the functions in a VPC, and the preflight that checks it. */
  vpc?: FunctionNetworkProps;
  /** The Provisioner's `configuration` prop: `cluster` grants what reading it from the cluster needs. */
  configurationSource?: 'cluster';
}

async function synthesize(request: SynthRequest): Promise<string> {
  const [{ App, Stack }, { Provisioner }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../../../infra/provisioner'),
  ]);
  // No bundling: the roles do not depend on the functions' code, and esbuild would cost seconds.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  // Environment-agnostic, so ARNs keep ${AWS::AccountId} and resolve per moto account.
  const stack = new Stack(app, 'Karpless');
  new Provisioner(stack, 'Provisioner', {
    clusterName: request.clusterName,
    manifests: request.configuration,
    ...(request.vpc ? { vpc: request.vpc } : {}),
    ...(request.configurationSource ? { configuration: request.configurationSource } : {}),
  });
  return JSON.stringify(app.synth().getStackByName(stack.stackName).template);
}

export interface SynthServer {
  url: string;
  /**
   * Loads aws-cdk-lib and runs one synthesis, so no test's timeout pays for them. A synthesis holds
   * the event loop for seconds: call it once moto has answered, not while its start is being watched.
   */
  warmUp(): Promise<unknown>;
  stop(): Promise<void>;
}

/**
 * What the roles depend on: the cluster name and the node classes (their roles, instance profiles
 * and SSM parameters; infra/provisioner.ts reads no NodePool for IAM), the VPC if any, and whether
 * the configuration is read from the cluster. Tests that differ only in
 * their NodePools (budgets, consolidation policy) share one synthesis, seconds each under load.
 */
function cacheKey(request: SynthRequest): string {
  return JSON.stringify([
    request.clusterName,
    request.configuration.nodeClasses,
    request.vpc ?? null,
    request.configurationSource ?? null,
  ]);
}

/** A first synthesis costs ten times the next ones (lazy loading, JIT): paid while moto starts. */
const WARM_UP: SynthRequest = {
  clusterName: 'warm-up',
  configuration: {
    nodePools: [
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'warm-up' },
        spec: {
          template: {
            spec: {
              requirements: [],
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'warm-up' },
            },
          },
        },
      },
    ],
    nodeClasses: [
      {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'warm-up' },
        spec: {
          subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'warm-up' } }],
          securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'warm-up' } }],
          amiSelectorTerms: [{ alias: 'al2023@latest' }],
          role: 'KarpenterNodeRole-warm-up',
        },
      },
    ],
  },
};

export async function startSynthServer(): Promise<SynthServer> {
  const cache = new Map<string, Promise<string>>();
  // The imports load while moto starts (they mostly wait on the disk); the warm-up synthesis after.
  const imports = Promise.all([import('aws-cdk-lib'), import('../../../infra/provisioner')]).catch(() => undefined);
  let warm: Promise<unknown> = imports;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let key = '';
      try {
        await warm;
        const request = JSON.parse(body) as SynthRequest;
        key = cacheKey(request);
        let template = cache.get(key);
        if (!template) {
          template = synthesize(request);
          cache.set(key, template);
        }
        const text = await template;
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      } catch (error) {
        cache.delete(key);
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(error instanceof Error ? error.message : String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/synth`,
    warmUp: () => {
      warm = imports.then(() => synthesize(WARM_UP)).catch(() => undefined);
      return warm;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The template for this cluster and configuration, from the global setup's server. */
export async function fetchTemplate(url: string, request: SynthRequest): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(request) });
  const text = await response.text();
  if (!response.ok) throw new Error(`iam harness: cdk synth failed for cluster ${request.clusterName}: ${text}`);
  return JSON.parse(text);
}
