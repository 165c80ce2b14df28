// preflight λ: backs the stack's Custom::KarplessPreflight, deployed only when the functions run in a
// VPC. CloudFormation invokes it before it creates any other function (they depend on it), on Create
// and on every Update that changes the VPC, subnets or security groups; a problem fails the resource,
// and so the deploy, with a reason naming each id (shared/runtime/preflight.ts). It runs outside the
// VPC it checks, with a role that may only describe VPCs, subnets and security groups.

import { EC2Client } from '@aws-sdk/client-ec2';
import type { Context } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import {
  type CustomResourceEvent,
  type CustomResourceResponse,
  respond,
  type SendResponse,
} from '../../shared/providers/cfn-response';
import { readNetworkFacts, type VpcApi, vpcApi } from '../../shared/providers/vpc';
import { clientConfig } from '../../shared/runtime/environment';
import { type Powertools, powertools } from '../../shared/runtime/powertools';
import { networkProblems, networkRequest, preflightFailure } from '../../shared/runtime/preflight';

export function createPreflightHandler(load: () => VpcApi, tools: Powertools, send?: SendResponse) {
  return async (event: CustomResourceEvent, context: Context): Promise<CustomResourceResponse> => {
    tools.logger.addContext(context);
    const response = await preflightResponse(event, load);
    const log = response.Status === 'SUCCESS' ? tools.logger.info : tools.logger.error;
    log.call(tools.logger, 'preflight', { requestType: event.RequestType, reason: response.Reason });
    await respond(event, response, send);
    return response;
  };
}

async function preflightResponse(event: CustomResourceEvent, load: () => VpcApi): Promise<CustomResourceResponse> {
  // Never changes, so an Update is never a replacement and only the stack's deletion deletes it.
  const PhysicalResourceId = event.PhysicalResourceId ?? `${event.StackId}/${event.LogicalResourceId}`;
  // A Delete (the stack going away, or the rollback of a failed Create) has nothing to undo.
  if (event.RequestType === 'Delete') return { Status: 'SUCCESS', Reason: 'nothing to do', PhysicalResourceId };
  try {
    const request = networkRequest(event.ResourceProperties);
    const problems = networkProblems(request, await readNetworkFacts(load(), request));
    if (problems.length > 0) return { Status: 'FAILED', Reason: preflightFailure(problems), PhysicalResourceId };
    const groups = request.securityGroupIds.length > 0 ? request.securityGroupIds.join(', ') : 'one the stack creates';
    return {
      Status: 'SUCCESS',
      Reason: `vpc ${request.vpcId}: subnets ${request.subnetIds.join(', ')} and security groups (${groups}) are in it`,
      PhysicalResourceId,
    };
  } catch (error) {
    return {
      Status: 'FAILED',
      Reason: `karpless preflight could not read the network: ${errorMessage(error)}`,
      PhysicalResourceId,
    };
  }
}

const tools = powertools(SERVICE.preflight);
let api: VpcApi | undefined;
const preflight = createPreflightHandler(
  () => (api ??= vpcApi(new EC2Client(clientConfig(process.env.AWS_REGION ?? '')))),
  tools,
);
export const handler = (event: CustomResourceEvent, context: Context): Promise<CustomResourceResponse> =>
  preflight(event, context);
