// `npm run demo [-- --endpoint-url URL]`: runs the whole of karpless on the moto AWS emulator and the
// in-repo fake Kubernetes API server and prints the timeline. With --endpoint-url it uses a moto
// server that is already running and leaves everything it created there, to inspect with the AWS CLI:
//   aws --endpoint-url URL --region us-west-2 ec2 describe-instances
// Without it, it starts its own moto on a free loopback port and stops it at the end.
// With --keep the fake API server stays up after the timeline and a kubeconfig for it is printed, so
// kubectl can look at the demo's cluster (get nodes, nodeclaims, ec2nodeclasses -o wide, describe pod)
// until Ctrl-C.
// With --vpc the stack is synthesized for a private cluster (as -c vpc=… -c subnets=…): every function
// in two private subnets of the cluster's VPC, and the VPC endpoints they need printed.

import { parseArgs } from 'node:util';
import type { FakeApiServer } from '../../test/support/kube/fake-apiserver';
import { writeKubeconfig } from '../../test/support/kube/kubectl';
import { startMotoServer } from '../moto-server';
import { DEMO_REGION, demoEndpoint } from './aws';
import { DEMO_CLUSTER, runDemo } from './scenario';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'endpoint-url': { type: 'string' },
      keep: { type: 'boolean' },
      vpc: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log('usage: npm run demo [-- --endpoint-url http://127.0.0.1:PORT] [--keep] [--vpc]');
    return 0;
  }
  const given = values['endpoint-url'];
  const moto = given
    ? undefined
    : await startMotoServer({ command: 'moto_server', installHint: "install it with: pip install 'moto[server]'" });
  const endpoint = given ?? moto?.endpoint ?? '';
  console.log(`karpless demo: cluster ${DEMO_CLUSTER} on moto at ${endpoint} (${DEMO_REGION})\n`);
  try {
    const result = await runDemo({
      aws: demoEndpoint(endpoint),
      keepApiServer: values.keep === true,
      vpc: values.vpc === true,
    });
    const claims = result.launched.flatMap((d) => d.nodeClaims);
    const total = claims.reduce((sum, c) => sum + c.price, 0);
    const end = result.capacity.at(-1);
    const worst = Math.max(...result.capacity.map((s) => s.launchedVcpu / Math.max(s.requestedVcpu, 1e-9)));
    console.log(
      `\n${claims.length} NodeClaims launched in ${result.launched.length} provision decisions ($${total.toFixed(4)}/hour in all); ${result.interruptedInstance} interrupted and replaced; ${result.rollout.rolled.length} nodes rolled onto ${result.rollout.to}, at most ${result.rollout.maxDisrupting} at a time.`,
    );
    if (end)
      console.log(
        `At the end ${end.instances} instances with ${end.launchedVcpu} vCPU serve ${end.requestedVcpu} vCPU of requests; at most ${worst.toFixed(2)}× the requested vCPU at any of ${result.capacity.length} steps.`,
      );
    if (result.vpc) {
      console.log(
        `Every function (${result.vpc.placements.length}) runs in ${result.vpc.vpcId}, subnets ${result.vpc.functionSubnetIds.join(', ')}. Without NAT, the VPC needs these endpoints: ${result.vpc.endpoints}`,
      );
    }
    if (given)
      console.log(
        `Resources left on ${endpoint}: try aws --endpoint-url ${endpoint} --region ${DEMO_REGION} ec2 describe-instances`,
      );
    if (result.apiServer) await keepServing(result.apiServer);
    return 0;
  } finally {
    await moto?.stop();
  }
}

/** Prints a kubeconfig for the fake API server and serves until SIGINT or SIGTERM. */
async function keepServing(server: FakeApiServer): Promise<void> {
  const kubeconfig = writeKubeconfig(server.url);
  console.log(
    [
      '',
      `The demo's fake API server keeps running at ${server.url}. Look at it with kubectl:`,
      `  export KUBECONFIG=${kubeconfig}`,
      '  kubectl get nodepools,nodeclaims,ec2nodeclasses -o wide',
      '  kubectl get nodes',
      '  kubectl describe pod <name>',
      'Ctrl-C stops it.',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
