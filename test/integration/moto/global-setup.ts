// Starts one moto server (through the seeding/fault launcher) for the whole integration project and
// hands its endpoint to the tests with provide('motoEndpoint'). Tests isolate themselves by account
// (x-moto-account-id, see ../helpers.ts), so files can run in parallel against it. moto enforces IAM
// from the first request (the tests' "testing" key is each account's root user, see launcher.py), and
// the stack synthesizer of the IAM harness (../iam) answers on provide('iamSynthEndpoint').
// Missing python3 or moto is a failure with install instructions, never a skip.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeAvailabilityZonesCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { TestProject } from 'vitest/node';
import { startMotoServer } from '../../../scripts/moto-server';
import { startSynthServer } from '../iam/synth-server';
import { SEED } from './seed';

declare module 'vitest' {
  export interface ProvidedContext {
    motoEndpoint: string;
    iamSynthEndpoint: string;
  }
}

const PYTHON = process.env.KARPLESS_PYTHON ?? 'python3';
// Test workers inherit this; the SDK's Node 20 deprecation notice would otherwise fill the output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function requireMoto(): void {
  const probe = spawnSync(PYTHON, ['-c', 'import moto, moto.server, flask, flask_cors; print(moto.__version__)'], {
    encoding: 'utf8',
  });
  if (probe.error || probe.status !== 0) {
    const why = probe.error ? probe.error.message : probe.stderr.trim().split('\n').pop();
    throw new Error(
      `the integration tests need python3 with moto's server extras (${why}).\n` +
        `Install them with: python3 -m pip install 'moto[server]==5.2.1'  (or set KARPLESS_PYTHON to a python that has them)`,
    );
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  requireMoto();
  const synth = await startSynthServer();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-moto-'));
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(SEED));
  const launcher = join(dirname(fileURLToPath(import.meta.url)), 'launcher.py');
  const moto = await startMotoServer({
    command: PYTHON,
    args: [launcher],
    env: { ...process.env, SSM_SEED: seedFile, INITIAL_NO_AUTH_ACTION_COUNT: '0' },
    installHint: "install python3 with: python3 -m pip install 'moto[server]==5.2.1'",
  }).catch(async (error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    await synth.stop();
    throw error;
  });
  const { endpoint } = moto;
  const stop = async () => {
    await moto.stop();
    await synth.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The EC2 backend loads lazily (~3 s on the first call); pay it once here, not in a test.
    const ec2 = new EC2Client({
      endpoint,
      region: 'us-west-2',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await ec2.send(new DescribeAvailabilityZonesCommand({}));
    ec2.destroy();
  } catch (error) {
    await stop();
    throw error;
  }
  await synth.warmUp();
  project.provide('motoEndpoint', endpoint);
  project.provide('iamSynthEndpoint', synth.url);
  return stop;
}
