// The SSM and IAM clients only the launching functions (provision, drift) use: AMI aliases resolve
// through SSM parameters and instance profiles through IAM. Tests give their own in AwsClients.

import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { clientConfig, type Runtime } from '../environment';

export function launchClients(runtime: Runtime): { ssm: SSMClient; iam: IAMClient } {
  const { clients, settings } = runtime;
  return {
    ssm: clients.ssm ?? new SSMClient(clientConfig(settings.region)),
    iam: clients.iam ?? new IAMClient(clientConfig(settings.region)),
  };
}
