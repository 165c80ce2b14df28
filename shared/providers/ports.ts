// The AWS calls karpless makes, one method per call, so each provider declares exactly the calls it
// needs (Pick<EC2Api, …>) and unit tests hand it a recording fake. awsApis() adapts real SDK v3
// clients (the only place the SDK command classes are used).

import {
  CreateFleetCommand,
  type CreateFleetCommandInput,
  type CreateFleetCommandOutput,
  CreateLaunchTemplateCommand,
  type CreateLaunchTemplateCommandInput,
  type CreateLaunchTemplateCommandOutput,
  CreateTagsCommand,
  type CreateTagsCommandInput,
  DeleteLaunchTemplateCommand,
  type DeleteLaunchTemplateCommandInput,
  DescribeAvailabilityZonesCommand,
  type DescribeAvailabilityZonesCommandInput,
  type DescribeAvailabilityZonesCommandOutput,
  DescribeCapacityReservationsCommand,
  type DescribeCapacityReservationsCommandInput,
  type DescribeCapacityReservationsCommandOutput,
  DescribeImagesCommand,
  type DescribeImagesCommandInput,
  type DescribeImagesCommandOutput,
  DescribeInstancesCommand,
  type DescribeInstancesCommandInput,
  type DescribeInstancesCommandOutput,
  DescribeInstanceTypeOfferingsCommand,
  type DescribeInstanceTypeOfferingsCommandInput,
  type DescribeInstanceTypeOfferingsCommandOutput,
  DescribeInstanceTypesCommand,
  type DescribeInstanceTypesCommandInput,
  type DescribeInstanceTypesCommandOutput,
  DescribeLaunchTemplatesCommand,
  type DescribeLaunchTemplatesCommandInput,
  type DescribeLaunchTemplatesCommandOutput,
  DescribeLaunchTemplateVersionsCommand,
  type DescribeLaunchTemplateVersionsCommandInput,
  type DescribeLaunchTemplateVersionsCommandOutput,
  DescribePlacementGroupsCommand,
  type DescribePlacementGroupsCommandInput,
  type DescribePlacementGroupsCommandOutput,
  DescribeSecurityGroupsCommand,
  type DescribeSecurityGroupsCommandInput,
  type DescribeSecurityGroupsCommandOutput,
  DescribeSpotPriceHistoryCommand,
  type DescribeSpotPriceHistoryCommandInput,
  type DescribeSpotPriceHistoryCommandOutput,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandInput,
  type DescribeSubnetsCommandOutput,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  DescribeClusterCommand,
  type DescribeClusterCommandInput,
  type DescribeClusterCommandOutput,
  EKSClient,
} from '@aws-sdk/client-eks';
import {
  AddRoleToInstanceProfileCommand,
  type AddRoleToInstanceProfileCommandInput,
  CreateInstanceProfileCommand,
  type CreateInstanceProfileCommandInput,
  type CreateInstanceProfileCommandOutput,
  DeleteInstanceProfileCommand,
  type DeleteInstanceProfileCommandInput,
  GetInstanceProfileCommand,
  type GetInstanceProfileCommandInput,
  type GetInstanceProfileCommandOutput,
  IAMClient,
  ListInstanceProfilesCommand,
  type ListInstanceProfilesCommandInput,
  type ListInstanceProfilesCommandOutput,
  RemoveRoleFromInstanceProfileCommand,
  type RemoveRoleFromInstanceProfileCommandInput,
  TagInstanceProfileCommand,
  type TagInstanceProfileCommandInput,
} from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  type GetParameterCommandInput,
  type GetParameterCommandOutput,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { type AwsTimeouts, clientTimeoutConfig, nameEndpointOnFailure } from './aws-client';

export interface EC2Api {
  describeSubnets(input: DescribeSubnetsCommandInput): Promise<DescribeSubnetsCommandOutput>;
  describeSecurityGroups(input: DescribeSecurityGroupsCommandInput): Promise<DescribeSecurityGroupsCommandOutput>;
  describeImages(input: DescribeImagesCommandInput): Promise<DescribeImagesCommandOutput>;
  describeInstanceTypes(input: DescribeInstanceTypesCommandInput): Promise<DescribeInstanceTypesCommandOutput>;
  describeInstanceTypeOfferings(
    input: DescribeInstanceTypeOfferingsCommandInput,
  ): Promise<DescribeInstanceTypeOfferingsCommandOutput>;
  describeSpotPriceHistory(input: DescribeSpotPriceHistoryCommandInput): Promise<DescribeSpotPriceHistoryCommandOutput>;
  describeAvailabilityZones(
    input: DescribeAvailabilityZonesCommandInput,
  ): Promise<DescribeAvailabilityZonesCommandOutput>;
  describeLaunchTemplates(input: DescribeLaunchTemplatesCommandInput): Promise<DescribeLaunchTemplatesCommandOutput>;
  createLaunchTemplate(input: CreateLaunchTemplateCommandInput): Promise<CreateLaunchTemplateCommandOutput>;
  createFleet(input: CreateFleetCommandInput): Promise<CreateFleetCommandOutput>;
  describeInstances(input: DescribeInstancesCommandInput): Promise<DescribeInstancesCommandOutput>;
  /** A launched claim's own tags (karpenter.sh/nodeclaim, Name) after a batched launch. */
  createTags(input: CreateTagsCommandInput): Promise<unknown>;
  describeCapacityReservations(
    input: DescribeCapacityReservationsCommandInput,
  ): Promise<DescribeCapacityReservationsCommandOutput>;
  describePlacementGroups(input: DescribePlacementGroupsCommandInput): Promise<DescribePlacementGroupsCommandOutput>;
  /** Garbage collection only (the gc function). */
  deleteLaunchTemplate(input: DeleteLaunchTemplateCommandInput): Promise<unknown>;
  describeLaunchTemplateVersions(
    input: DescribeLaunchTemplateVersionsCommandInput,
  ): Promise<DescribeLaunchTemplateVersionsCommandOutput>;
}

export interface SSMApi {
  getParameter(input: GetParameterCommandInput): Promise<GetParameterCommandOutput>;
}

export interface EKSApi {
  describeCluster(input: DescribeClusterCommandInput): Promise<DescribeClusterCommandOutput>;
}

export interface IAMApi {
  getInstanceProfile(input: GetInstanceProfileCommandInput): Promise<GetInstanceProfileCommandOutput>;
  createInstanceProfile(input: CreateInstanceProfileCommandInput): Promise<CreateInstanceProfileCommandOutput>;
  addRoleToInstanceProfile(input: AddRoleToInstanceProfileCommandInput): Promise<unknown>;
  removeRoleFromInstanceProfile(input: RemoveRoleFromInstanceProfileCommandInput): Promise<unknown>;
  tagInstanceProfile(input: TagInstanceProfileCommandInput): Promise<unknown>;
  /** Garbage collection only (the gc function). */
  listInstanceProfiles(input: ListInstanceProfilesCommandInput): Promise<ListInstanceProfilesCommandOutput>;
  deleteInstanceProfile(input: DeleteInstanceProfileCommandInput): Promise<unknown>;
}

export interface AwsApis {
  ec2: EC2Api;
  ssm: SSMApi;
  eks: EKSApi;
  iam: IAMApi;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function ec2Api(client: Sender): EC2Api {
  return {
    describeSubnets: (i) => client.send(new DescribeSubnetsCommand(i)),
    describeSecurityGroups: (i) => client.send(new DescribeSecurityGroupsCommand(i)),
    describeImages: (i) => client.send(new DescribeImagesCommand(i)),
    describeInstanceTypes: (i) => client.send(new DescribeInstanceTypesCommand(i)),
    describeInstanceTypeOfferings: (i) => client.send(new DescribeInstanceTypeOfferingsCommand(i)),
    describeSpotPriceHistory: (i) => client.send(new DescribeSpotPriceHistoryCommand(i)),
    describeAvailabilityZones: (i) => client.send(new DescribeAvailabilityZonesCommand(i)),
    describeLaunchTemplates: (i) => client.send(new DescribeLaunchTemplatesCommand(i)),
    createLaunchTemplate: (i) => client.send(new CreateLaunchTemplateCommand(i)),
    createFleet: (i) => client.send(new CreateFleetCommand(i)),
    describeInstances: (i) => client.send(new DescribeInstancesCommand(i)),
    createTags: (i) => client.send(new CreateTagsCommand(i)),
    describeCapacityReservations: (i) => client.send(new DescribeCapacityReservationsCommand(i)),
    describePlacementGroups: (i) => client.send(new DescribePlacementGroupsCommand(i)),
    deleteLaunchTemplate: (i) => client.send(new DeleteLaunchTemplateCommand(i)),
    describeLaunchTemplateVersions: (i) => client.send(new DescribeLaunchTemplateVersionsCommand(i)),
  };
}

export function ssmApi(client: Sender): SSMApi {
  return { getParameter: (i) => client.send(new GetParameterCommand(i)) };
}

export function eksApi(client: Sender): EKSApi {
  return { describeCluster: (i) => client.send(new DescribeClusterCommand(i)) };
}

export function iamApi(client: Sender): IAMApi {
  return {
    getInstanceProfile: (i) => client.send(new GetInstanceProfileCommand(i)),
    createInstanceProfile: (i) => client.send(new CreateInstanceProfileCommand(i)),
    addRoleToInstanceProfile: (i) => client.send(new AddRoleToInstanceProfileCommand(i)),
    removeRoleFromInstanceProfile: (i) => client.send(new RemoveRoleFromInstanceProfileCommand(i)),
    tagInstanceProfile: (i) => client.send(new TagInstanceProfileCommand(i)),
    listInstanceProfiles: (i) => client.send(new ListInstanceProfilesCommand(i)),
    deleteInstanceProfile: (i) => client.send(new DeleteInstanceProfileCommand(i)),
  };
}

export interface AwsClientOptions extends AwsTimeouts {
  region?: string;
  /** e.g. a moto endpoint; the same URL serves every service. */
  endpoint?: string;
}

/**
 * Real SDK clients behind the ports, with connect and per-attempt request timeouts, the SDK's
 * standard retry (throttling and network errors, with backoff) and EndpointErrors naming the endpoint.
 */
export function awsApis(options: AwsClientOptions = {}): AwsApis & { destroy(): void } {
  const config = {
    ...(options.region ? { region: options.region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...clientTimeoutConfig(options),
  };
  const ec2 = new EC2Client(config);
  const ssm = new SSMClient(config);
  const eks = new EKSClient(config);
  const iam = new IAMClient(config);
  for (const [client, service] of [
    [ec2, 'EC2'],
    [ssm, 'SSM'],
    [eks, 'EKS'],
    [iam, 'IAM'],
  ] as const) {
    nameEndpointOnFailure(client, service, options);
  }
  return {
    ec2: ec2Api(ec2),
    ssm: ssmApi(ssm),
    eks: eksApi(eks),
    iam: iamApi(iam),
    destroy() {
      ec2.destroy();
      ssm.destroy();
      eks.destroy();
      iam.destroy();
    },
  };
}
