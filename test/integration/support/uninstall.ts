// The uninstall custom resource's Delete event as CloudFormation sends it at `cdk destroy`, run
// through the gc function's stack-event handler under the gc role; the response CloudFormation
// would receive is returned instead of being PUT to the presigned URL.

import type { Context } from 'aws-lambda';
import { createStackEventHandler } from '../../../lambdas/gc/handler';
import type { CustomResourceEvent } from '../../../shared/providers/cfn-response';
import { uninstallDeps } from '../../../shared/runtime/deps/gc';
import type { Runtime } from '../../../shared/runtime/environment';
import { powertools } from '../../../shared/runtime/powertools';

export interface UninstallDelete {
  cluster: string;
  accountId: string;
  logicalId?: string;
  properties?: Record<string, unknown>;
}

export async function deleteUninstallResource(gc: Runtime, request: UninstallDelete): Promise<Record<string, unknown>> {
  const tools = powertools('itest-uninstall', request.cluster);
  const logicalId = request.logicalId ?? 'ProvisionerUninstall';
  let body = '';
  const handler = createStackEventHandler(
    async () => uninstallDeps(gc, tools.telemetry),
    tools,
    async (_url, sent) => {
      body = sent;
    },
  );
  const event: CustomResourceEvent = {
    RequestType: 'Delete',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/presigned',
    StackId: `arn:aws:cloudformation:us-west-2:${request.accountId}:stack/Karpless-${request.cluster}/1`,
    RequestId: `delete-${logicalId}`,
    LogicalResourceId: logicalId,
    PhysicalResourceId: `Karpless-${request.cluster}/${logicalId}`,
    ResourceType: 'Custom::KarplessUninstall',
    ...(request.properties ? { ResourceProperties: request.properties } : {}),
  };
  const context = { getRemainingTimeInMillis: () => 90_000, awsRequestId: 'req', functionName: 'gc' };
  await handler(event, context as unknown as Context);
  return JSON.parse(body) as Record<string, unknown>;
}
