// One project Lambda construct with the defaults every karpless function shares: local esbuild
// bundling (never Docker) with the options of ./bundling, arm64 on Node 24, its own log group, and
// the validated configuration document copied into the bundle.

import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CONFIG_FILE_NAME, ENV } from '../shared/contracts';
import { BUNDLE_OPTIONS, bundleAliases } from './bundling';
import type { FunctionNetwork } from './network';

/** Where bundled code finds the configuration document (Lambda's task root). */
export const BUNDLED_CONFIG_PATH = `/var/task/${CONFIG_FILE_NAME}`;

export interface KarplessFunctionProps {
  /** Path of the handler module (exports `handler`). */
  readonly entry: string;
  /** Path of the configuration document to copy beside the bundle. */
  readonly configurationFile: string;
  readonly timeout: Duration;
  readonly memorySizeMiB: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /**
   * At most this many concurrent invocations.
   * @default - no limit
   */
  readonly reservedConcurrency?: number;
  /**
   * Run in these subnets with these security groups (a private cluster's VPC).
   * @default - outside any VPC
   */
  readonly network?: Pick<FunctionNetwork, 'vpc' | 'subnets' | 'securityGroups'>;
}

export class KarplessFunction extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: KarplessFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const configurationFile = props.configurationFile;
    this.function = new NodejsFunction(this, 'Resource', {
      entry: props.entry,
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySizeMiB,
      logGroup,
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      ...(props.network
        ? {
            vpc: props.network.vpc,
            vpcSubnets: { subnets: props.network.subnets },
            securityGroups: props.network.securityGroups,
          }
        : {}),
      environment: {
        ...props.environment,
        [ENV.configFile]: BUNDLED_CONFIG_PATH,
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.ESM,
        mainFields: [...BUNDLE_OPTIONS.mainFields],
        minify: BUNDLE_OPTIONS.minify,
        sourceMap: BUNDLE_OPTIONS.sourcemap,
        target: BUNDLE_OPTIONS.target,
        banner: BUNDLE_OPTIONS.banner,
        esbuildArgs: Object.fromEntries(
          Object.entries(bundleAliases()).map(([name, path]) => [`--alias:${name}`, path]),
        ),
        // The SDK is bundled, pinned by our lockfile, rather than taken from whatever the runtime ships.
        bundleAwsSDK: true,
        forceDockerBundling: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_input: string, outputDir: string) => [
            `cp ${shellQuote(configurationFile)} ${shellQuote(`${outputDir}/${CONFIG_FILE_NAME}`)}`,
          ],
        },
      },
    });
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
