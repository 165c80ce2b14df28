import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Role } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it, vi } from 'vitest';
import { loadDeployConfiguration } from '../../infra/configuration';
import { DETAIL_TYPE, ENV, EVENT_SOURCE, INTERRUPTION_RULES, KUBE } from '../../shared/contracts';
import { actionsOf, exampleTemplate, statementsOf, synthProvisioner } from './stack';

// Synthesizing a stack takes seconds, and minutes on a 2-core machine shared with other builds.
vi.setConfig({ testTimeout: 180_000 });

describe('Provisioner: state table', () => {
  it('creates one encrypted on-demand table with pk/sk, TTL and point-in-time recovery', () => {
    const template = exampleTemplate();
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      SSESpecification: { SSEEnabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });
});

describe('Provisioner: queues and rules', () => {
  it('keeps interruption messages 300 s, encrypted, with a DLQ reached before they expire', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 300,
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 120,
      RedrivePolicy: { maxReceiveCount: 2, deadLetterTargetArn: Match.anyValue() },
    });
  });

  it('makes the provision queue FIFO with content-based deduplication, 6× the consumer timeout and 5 attempts', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      ContentBasedDeduplication: true,
      VisibilityTimeout: 720,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() },
    });
    template.resourcePropertiesCountIs('AWS::SQS::Queue', { FifoQueue: true }, 2);
  });

  it('denies non-TLS access on every queue', () => {
    const template = exampleTemplate();
    const policies = template.findResources('AWS::SQS::QueuePolicy');
    expect(Object.keys(policies)).toHaveLength(4);
    for (const policy of Object.values(policies)) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('lets only EventBridge rules send to the interruption queue', () => {
    const template = exampleTemplate();
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy'));
    const allows = policies
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[])
      .filter((s) => s.Effect === 'Allow');
    expect(allows.length).toBe(INTERRUPTION_RULES.length + 1);
    for (const statement of allows) {
      expect(statement.Principal).toEqual({ Service: 'events.amazonaws.com' });
      expect(statement.Condition).toHaveProperty(['ArnEquals', 'aws:SourceArn']);
    }
  });

  it.each(INTERRUPTION_RULES)('routes $detailTypes from $source to the interruption queue', (rule) => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: [rule.source], 'detail-type': [...rule.detailTypes] },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('InterruptionQueue'), 'Arn'] } })],
    });
  });

  it('routes this cluster’s PodsUnschedulable notices from the notice bus to the FIFO queue, one group per cluster', () => {
    const template = exampleTemplate();
    template.resourceCountIs('AWS::Events::EventBus', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: Match.stringLikeRegexp('NoticeBus') },
      EventPattern: {
        source: [EVENT_SOURCE],
        'detail-type': [DETAIL_TYPE.podsUnschedulable],
        detail: { cluster: ['demo'] },
      },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ProvisionQueue'), 'Arn'] },
          SqsParameters: { MessageGroupId: 'demo' },
        }),
      ],
    });
  });

  it('runs the watcher on a schedule without retries', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })],
    });
  });

  it('runs the drift function on its schedule and on AMI State Change events of the account', () => {
    const { template } = synthProvisioner({ driftInterval: Duration.minutes(10) });
    const driftArn = { 'Fn::GetAtt': [Match.stringLikeRegexp('^ProvisionerDrift'), 'Arn'] };
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(10 minutes)',
      Targets: [
        Match.objectLike({ Arn: driftArn, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 } }),
      ],
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 AMI State Change'], detail: { State: ['available'] } },
      Targets: [Match.objectLike({ Arn: driftArn })],
    });
    // Only EventBridge may invoke it, from those two rules.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter((p) =>
      JSON.stringify(p.Properties.FunctionName).includes('ProvisionerDrift'),
    );
    expect(permissions.map((p) => p.Properties.Principal)).toEqual(['events.amazonaws.com', 'events.amazonaws.com']);
  });

  it('decides drift and consolidation every minute by default (as often as Karpenter converges), one run at a time', () => {
    const template = exampleTemplate();
    const drift = Object.values(template.findResources('AWS::Events::Rule')).find(
      (r) => r.Properties.ScheduleExpression && JSON.stringify(r.Properties.Targets).includes('ProvisionerDrift'),
    );
    expect(drift?.Properties.ScheduleExpression).toBe('rate(1 minute)');
    const driftFunction = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('ProvisionerDrift'),
    );
    expect(driftFunction?.[1].Properties.ReservedConcurrentExecutions).toBe(1);
  });

  it('fails synth when the interruption timeout could not reach the DLQ within the retention', async () => {
    const { EventQueues } = await import('../../infra/queues');
    const { App, Duration, Stack } = await import('aws-cdk-lib');
    const stack = new Stack(new App(), 'S');
    expect(
      () =>
        new EventQueues(stack, 'Q', {
          clusterName: 'demo',
          interruptionConsumerTimeout: Duration.seconds(30),
          provisionConsumerTimeout: Duration.minutes(1),
          interruptionMaxReceiveCount: 2,
          provisionMaxReceiveCount: 3,
        }),
    ).toThrow(/interruption consumer timeout 30s is too long/);
  });
});

describe('Provisioner: functions', () => {
  it('deploys five arm64 Node 24 functions with the contract environment', () => {
    const template = exampleTemplate();
    template.resourceCountIs('AWS::Lambda::Function', 5);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(Object.keys(fn.Properties.Environment.Variables)).toEqual(
        expect.arrayContaining([ENV.clusterName, ENV.stateTable, ENV.noticeBus, ENV.configFile]),
      );
      expect(fn.Properties.Environment.Variables[ENV.clusterName]).toBe('demo');
    }
  });

  it('consumes both queues with partial batch responses', () => {
    const template = exampleTemplate();
    template.resourcePropertiesCountIs(
      'AWS::Lambda::EventSourceMapping',
      { FunctionResponseTypes: ['ReportBatchItemFailures'], BatchSize: 10 },
      2,
    );
  });

  it('passes the rebalance behaviour to the interruption function only', () => {
    const { template } = synthProvisioner({ rebalanceAction: 'act' });
    const withRebalance = Object.values(template.findResources('AWS::Lambda::Function')).filter(
      (f) => f.Properties.Environment.Variables[ENV.rebalanceAction] !== undefined,
    );
    expect(withRebalance).toHaveLength(1);
    expect(withRebalance[0]?.Properties.Environment.Variables[ENV.rebalanceAction]).toBe('act');
  });

  it("passes Karpenter's NodeRepair and SpotToSpotConsolidation gates to the drift function only, off by default", () => {
    const gates = (template: ReturnType<typeof exampleTemplate>) =>
      Object.values(template.findResources('AWS::Lambda::Function'))
        .map((f) => f.Properties.Environment.Variables)
        .filter((v) => v[ENV.nodeRepair] !== undefined || v[ENV.spotToSpotConsolidation] !== undefined)
        .map((v) => [v[ENV.nodeRepair], v[ENV.spotToSpotConsolidation]]);
    expect(gates(exampleTemplate())).toEqual([]);
    const { template } = synthProvisioner({ nodeRepair: true, spotToSpotConsolidation: true });
    expect(gates(template)).toEqual([['true', 'true']]);
    const drift = Object.entries(template.findResources('AWS::Lambda::Function')).find(
      ([, f]) => f.Properties.Environment.Variables[ENV.nodeRepair] === 'true',
    );
    expect(drift?.[0]).toMatch(/Drift/);
  });

  it('reads the configuration from the cluster in every function only when asked to, and refuses a bad value', () => {
    const source = (template: ReturnType<typeof exampleTemplate>) =>
      Object.values(template.findResources('AWS::Lambda::Function')).map(
        (f) => f.Properties.Environment.Variables[ENV.configurationSource],
      );
    expect(source(exampleTemplate())).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(source(synthProvisioner({ configuration: 'cluster' }).template)).toEqual(Array(5).fill('cluster'));
    expect(() => synthProvisioner({ configuration: 'gitops' as never })).toThrow(
      'Provisioner configuration is "gitops": use "bundled" or "cluster"',
    );
  });

  it('keeps each function’s logs in its own log group with the given retention', () => {
    const template = exampleTemplate();
    template.resourcePropertiesCountIs('AWS::Logs::LogGroup', { RetentionInDays: 30 }, 5);
  });
});

describe('Provisioner: IAM', () => {
  it.each(['Provision', 'Drift'])(
    'lets only the launching functions launch (%s), and only with the cluster request tags',
    (launching) => {
      const template = exampleTemplate();
      const provision = statementsOf(template, launching);
      expect(provision).toContainEqual(
        expect.objectContaining({
          Sid: 'AllowScopedEC2InstanceActionsWithTags',
          Action: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
          Condition: {
            StringEquals: {
              'aws:RequestTag/kubernetes.io/cluster/demo': 'owned',
              'aws:RequestTag/eks:eks-cluster-name': 'demo',
            },
            StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
          },
        }),
      );
      expect(provision).toContainEqual(
        expect.objectContaining({
          Sid: 'AllowScopedResourceCreationTagging',
          Condition: expect.objectContaining({
            StringEquals: expect.objectContaining({
              'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
            }),
          }),
        }),
      );
      for (const other of ['Watcher', 'Interruption']) {
        const actions = actionsOf(statementsOf(template, other));
        expect(actions.has('ec2:CreateFleet')).toBe(false);
        expect(actions.has('ec2:RunInstances')).toBe(false);
        expect(actions.has('iam:PassRole')).toBe(false);
        expect(actions.has('iam:CreateInstanceProfile')).toBe(false);
      }
    },
  );

  it('passes only the node role, and only to EC2', () => {
    const template = exampleTemplate();
    const passRole = statementsOf(template, 'Provision').filter((s) => s.Action === 'iam:PassRole');
    expect(passRole).toEqual([
      expect.objectContaining({
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/NodeRole/), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
      }),
    ]);
  });

  it('terminates only instances the cluster owns', () => {
    const template = exampleTemplate();
    for (const fn of ['Watcher', 'Interruption']) {
      const deletion = statementsOf(template, fn).find((s) => s.Sid === 'AllowScopedDeletion');
      expect(deletion).toMatchObject({
        Action: 'ec2:TerminateInstances',
        Condition: {
          StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned' },
          StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
        },
      });
    }
    expect(actionsOf(statementsOf(template, 'Provision')).has('ec2:TerminateInstances')).toBe(false);
  });

  it("lets the watcher delete a deleted EC2NodeClass's templates and profiles only when it reads the cluster, with gc's tag scopes", () => {
    const bundled = statementsOf(exampleTemplate(), 'Watcher');
    expect(actionsOf(bundled).has('ec2:DeleteLaunchTemplate')).toBe(false);
    expect(actionsOf(bundled).has('iam:DeleteInstanceProfile')).toBe(false);

    const watcher = statementsOf(synthProvisioner({ configuration: 'cluster' }).template, 'Watcher');
    expect(watcher.find((s) => s.Sid === 'AllowScopedDeletion')).toMatchObject({
      Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      Condition: {
        StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned' },
        StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
      },
    });
    expect(actionsOf(watcher).has('ec2:DescribeLaunchTemplates')).toBe(true);
    expect(watcher.find((s) => s.Sid === 'AllowScopedInstanceProfileDeletion')).toMatchObject({
      Action: ['iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      Condition: {
        StringEquals: expect.objectContaining({ 'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned' }),
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    });
    // Sids stay unique within the watcher's policy (IAM refuses duplicates).
    const sids = watcher.flatMap((s) => (s.Sid ? [s.Sid] : []));
    expect(new Set(sids).size).toBe(sids.length);
  });

  it('limits re-tagging to the keys set at registration', () => {
    const template = exampleTemplate();
    const tagging = statementsOf(template, 'Watcher').find((s) => s.Sid === 'AllowScopedResourceTagging');
    expect(tagging).toMatchObject({
      Action: 'ec2:CreateTags',
      Condition: {
        'ForAllValues:StringEquals': { 'aws:TagKeys': ['eks:eks-cluster-name', 'karpenter.sh/nodeclaim', 'Name'] },
        StringEqualsIfExists: { 'aws:RequestTag/eks:eks-cluster-name': 'demo' },
      },
    });
  });

  it('scopes instance profiles by cluster, node class and region tags', () => {
    const template = exampleTemplate();
    const statements = statementsOf(template, 'Provision');
    const creation = statements.find((s) => s.Sid === 'AllowScopedInstanceProfileCreationActions');
    expect(creation).toMatchObject({
      Action: 'iam:CreateInstanceProfile',
      Condition: {
        StringEquals: {
          'aws:RequestTag/kubernetes.io/cluster/demo': 'owned',
          'aws:RequestTag/eks:eks-cluster-name': 'demo',
          'aws:RequestTag/topology.kubernetes.io/region': { Ref: 'AWS::Region' },
        },
        StringLike: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    });
    const actions = statements.find((s) => s.Sid === 'AllowScopedInstanceProfileActions');
    expect(actions).toMatchObject({
      Condition: {
        StringEquals: {
          'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned',
          'aws:ResourceTag/topology.kubernetes.io/region': { Ref: 'AWS::Region' },
        },
      },
    });
  });

  it('lets the watcher describe instance types for registration, but read no prices or offerings', () => {
    const actions = actionsOf(statementsOf(exampleTemplate(), 'Watcher'));
    expect(actions.has('ec2:DescribeInstanceTypes')).toBe(true);
    for (const action of [
      'pricing:GetProducts',
      'ec2:DescribeSpotPriceHistory',
      'ec2:DescribeInstanceTypeOfferings',
      'ec2:DescribeAvailabilityZones',
    ]) {
      expect(actions.has(action)).toBe(false);
    }
  });

  it('launches into subnets, security groups, reservations and placement groups another account shares', () => {
    for (const fn of ['Provision', 'Drift']) {
      const access = statementsOf(exampleTemplate(), fn).find((s) => s.Sid === 'AllowScopedEC2InstanceAccessActions');
      const resources = JSON.stringify(access?.Resource);
      for (const kind of ['security-group', 'subnet', 'capacity-reservation', 'placement-group']) {
        expect(resources).toContain(`:*:${kind}/*`);
      }
    }
  });

  it('reads the custom ssmParameter AMI terms the node classes name, by name or ARN', () => {
    const config = loadDeployConfiguration(['examples/manifests']);
    const [first, ...rest] = config.nodeClasses;
    if (!first) throw new Error('examples/manifests has no EC2NodeClass');
    const custom = {
      ...first,
      spec: {
        ...first.spec,
        amiFamily: 'AL2023' as const,
        amiSelectorTerms: [
          { ssmParameter: '/team/eks/node-ami' },
          { ssmParameter: 'arn:aws:ssm:us-west-2:210987654321:parameter/shared/ami' },
        ],
      },
    };
    const { template } = synthProvisioner({ manifests: { ...config, nodeClasses: [custom, ...rest] } });
    for (const fn of ['Provision', 'Drift']) {
      const ssm = statementsOf(template, fn).find((s) => s.Sid === 'AllowSSMReadActions');
      const resources = ssm?.Resource as unknown[];
      expect(JSON.stringify(resources)).toContain(':parameter/team/eks/node-ami"');
      expect(resources).toContainEqual('arn:aws:ssm:us-west-2:210987654321:parameter/shared/ami');
      expect(JSON.stringify(resources)).toContain('::parameter/aws/service/*');
    }
  });

  it('reads SSM only under /aws/service and describes only in the stack region', () => {
    const template = exampleTemplate();
    const statements = statementsOf(template, 'Provision');
    const ssm = statements.find((s) => s.Sid === 'AllowSSMReadActions');
    expect(JSON.stringify(ssm?.Resource)).toContain(':parameter/aws/service/*');
    for (const fn of ['Provision', 'Watcher', 'Interruption']) {
      const reads = statementsOf(template, fn).find((s) => s.Sid === 'AllowRegionalReadActions');
      expect(reads?.Condition).toEqual({ StringEquals: { 'aws:RequestedRegion': { Ref: 'AWS::Region' } } });
    }
  });

  it('creates the node role with the four managed policies nodes need', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::IAM::Role', {
      RoleName: 'KarpenterNodeRole-my-cluster',
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [
          Match.objectLike({ Principal: { Service: { 'Fn::Join': ['', ['ec2.', { Ref: 'AWS::URLSuffix' }]] } } }),
        ],
      }),
      ManagedPolicyArns: [
        'AmazonEKS_CNI_Policy',
        'AmazonEKSWorkerNodePolicy',
        'AmazonEC2ContainerRegistryPullOnly',
        'AmazonSSMManagedInstanceCore',
      ].map((p) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::aws:policy/${p}`]] })),
    });
  });

  it('uses a given node role instead of creating one', () => {
    const { template } = synthProvisioner((stack) => ({
      nodeRole: Role.fromRoleArn(stack, 'Node', 'arn:aws:iam::111111111111:role/existing'),
    }));
    expect(
      Object.keys(template.findResources('AWS::IAM::Role', { Properties: { RoleName: Match.anyValue() } })),
    ).toEqual([]);
    const passRole = statementsOf(template, 'Provision').find((s) => s.Action === 'iam:PassRole');
    expect(passRole?.Resource).toBe('arn:aws:iam::111111111111:role/existing');
  });

  it('uses an existing role given by name, the way a Karpenter user passes KarpenterNodeRole-<cluster>', () => {
    const { template } = synthProvisioner({ nodeRole: 'KarpenterNodeRole-demo' });
    expect(
      Object.keys(template.findResources('AWS::IAM::Role', { Properties: { RoleName: Match.anyValue() } })),
    ).toEqual([]);
    const passRole = statementsOf(template, 'Provision').find((s) => s.Action === 'iam:PassRole');
    expect(JSON.stringify(passRole?.Resource)).toContain(':role/KarpenterNodeRole-demo');
    const entries = Object.values(
      template.findResources('AWS::EKS::AccessEntry', { Properties: { Type: 'EC2_LINUX' } }),
    );
    expect(entries.map((e) => JSON.stringify(e.Properties.PrincipalArn))).toEqual([
      expect.stringContaining(':role/KarpenterNodeRole-demo'),
    ]);
  });

  it('fails synth when a node class names only an instance profile and no node role is given', () => {
    expect(() => synthProvisioner({ manifests: ['test/fixtures/manifests/profile-only'] })).toThrow(
      /EC2NodeClass\/byo-profile: spec.instanceProfile is set.*pass the Provisioner's nodeRole prop/,
    );
  });
});

describe('Provisioner: EKS access entries', () => {
  it('maps the node role as EC2_LINUX and the Kubernetes-facing functions to the karpless RBAC group', () => {
    const template = exampleTemplate();
    template.resourceCountIs('AWS::EKS::AccessEntry', 6);
    template.hasResourceProperties('AWS::EKS::AccessEntry', {
      ClusterName: 'demo',
      Type: 'EC2_LINUX',
      PrincipalArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('NodeRole'), 'Arn'] },
    });
    template.resourcePropertiesCountIs(
      'AWS::EKS::AccessEntry',
      { Type: 'STANDARD', KubernetesGroups: [KUBE.rbacGroup] },
      4,
    );
  });

  it('maps the provision function to the read-only group only', () => {
    const template = exampleTemplate();
    const entries = template.findResources('AWS::EKS::AccessEntry', {
      Properties: { PrincipalArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ProvisionerProvision'), 'Arn'] } },
    });
    expect(Object.values(entries).map((e) => e.Properties.KubernetesGroups)).toEqual([[KUBE.readerRbacGroup]]);
  });

  const nodeEntries = (manifests: string[], nodeRole?: string) => {
    const { template } = synthProvisioner({ manifests, ...(nodeRole ? { nodeRole } : {}) });
    return Object.values(template.findResources('AWS::EKS::AccessEntry'))
      .filter((e) => e.Properties.Type !== 'STANDARD')
      .map((e) => ({ type: e.Properties.Type, principal: JSON.stringify(e.Properties.PrincipalArn) }));
  };

  it('gives the role of a Windows node class EC2_WINDOWS and a Linux-only role EC2_LINUX, one entry each', () => {
    const entries = nodeEntries(['examples/manifests', 'test/fixtures/manifests/windows']);
    expect(entries.map((e) => e.type).sort()).toEqual(['EC2_LINUX', 'EC2_WINDOWS']);
    expect(new Set(entries.map((e) => e.principal)).size).toBe(2);
    expect(entries.find((e) => e.type === 'EC2_WINDOWS')?.principal).toContain('NodeRole2');
  });

  it('makes one EC2_WINDOWS entry for a role that Linux and Windows node classes share (EKS allows one per principal)', () => {
    const entries = nodeEntries(['examples/manifests', 'test/fixtures/manifests/windows'], 'shared-nodes');
    expect(entries).toEqual([{ type: 'EC2_WINDOWS', principal: expect.stringContaining(':role/shared-nodes') }]);
  });

  it('leaves node access entries out when asked', () => {
    const { template } = synthProvisioner({ nodeAccessEntries: false });
    template.resourcePropertiesCountIs('AWS::EKS::AccessEntry', { Type: 'EC2_LINUX' }, 0);
  });
});

describe('Provisioner: observability', () => {
  it('alarms on DLQ depth, function errors and oldest-message age, and builds a dashboard', () => {
    const template = exampleTemplate();
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { MetricName: 'ApproximateNumberOfMessagesVisible' },
      2,
    );
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage' }, 2);
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'Errors' }, 5);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    for (const metric of [
      'DecisionLatency',
      'NodeClaimsLaunched',
      'CapacityErrors',
      'Interruptions',
      'NodesRegistered',
      'NodesDisrupted',
      'DisruptionEligibleNodes',
      'AllowedDisruptions',
      'DisruptionDecisions',
    ]) {
      expect(body).toContain(metric);
    }
  });
});

describe('Provisioner: input checks at synth', () => {
  it('fails on a cluster name EKS would refuse', () => {
    expect(() => synthProvisioner({ clusterName: '-bad name' })).toThrow(
      /clusterName '-bad name' is not an EKS cluster name/,
    );
  });

  it('fails with every problem of an invalid manifest', () => {
    expect(() => synthProvisioner({ manifests: ['test/fixtures/manifests/invalid'] })).toThrow(/invalid configuration/);
  });
});

describe('Provisioner: cdk destroy', () => {
  it('has the gc function remove run-time instance profiles and launch templates before the node role goes', () => {
    const template = exampleTemplate();
    const resources = template.findResources('Custom::KarplessUninstall');
    const [uninstall] = Object.values(resources);
    expect(Object.keys(resources)).toHaveLength(1);
    expect(uninstall?.Properties.ServiceToken).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^ProvisionerGc/), 'Arn'],
    });
    const nodeRoles = Object.keys(
      template.findResources('AWS::IAM::Role', { Properties: { RoleName: Match.anyValue() } }),
    );
    expect(nodeRoles.length).toBeGreaterThan(0);
    expect(uninstall?.DependsOn).toEqual(expect.arrayContaining(nodeRoles));
  });
});
