// Synthesizes the karpless stack (offline, no bundling) for the cluster name and configuration a test
// runs with, so each function's role is the one `cdk deploy` would create for that test's manifests.
// It runs in the integration project's global setup, where aws-cdk-lib is imported once (seconds)
// instead of once per test file, and answers the test workers over 127.0.0.1 (POST /synth with
// {clusterName, configuration}, the template JSON back). Templates are cached per request body.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Configuration } from '../../../shared/apis/configuration';

export interface SynthRequest {
  clusterName: string;
  configuration: Configuration;
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
  new Provisioner(stack, 'Provisioner', { clusterName: request.clusterName, manifests: request.configuration });
  return JSON.stringify(app.synth().getStackByName(stack.stackName).template);
}

export interface SynthServer {
  url: string;
  /** Resolves once aws-cdk-lib is loaded, so no test's timeout pays for the import. */
  ready: Promise<unknown>;
  stop(): Promise<void>;
}

export async function startSynthServer(): Promise<SynthServer> {
  const cache = new Map<string, Promise<string>>();
  // Warm the imports while moto starts; the first test would otherwise wait for them.
  const warm = Promise.all([import('aws-cdk-lib'), import('../../../infra/provisioner')]).catch(() => undefined);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        await warm;
        let template = cache.get(body);
        if (!template) {
          template = synthesize(JSON.parse(body) as SynthRequest);
          cache.set(body, template);
        }
        const text = await template;
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      } catch (error) {
        cache.delete(body);
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
    ready: warm,
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
