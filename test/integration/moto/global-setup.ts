// Starts one moto server (through the seeding/fault launcher) for the whole integration project and
// hands its endpoint to the tests with provide('motoEndpoint'). Tests isolate themselves by account
// (x-moto-account-id, see ../helpers.ts), so files can run in parallel against it.
// Missing python3 or moto is a failure with install instructions, never a skip.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeAvailabilityZonesCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { TestProject } from 'vitest/node';
import { SEED } from './seed';

declare module 'vitest' {
  export interface ProvidedContext {
    motoEndpoint: string;
  }
}

const PYTHON = process.env.KARPLESS_PYTHON ?? 'python3';
// Test workers inherit this; the SDK's Node 20 deprecation notice would otherwise fill the output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const READY_TIMEOUT_MS = 30_000;

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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(endpoint: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto launcher exited with ${child.exitCode}:\n${log()}`);
    try {
      const response = await fetch(`${endpoint}/moto-api/`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`moto did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000}s:\n${log()}`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  requireMoto();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-moto-'));
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(SEED));
  const port = await freePort();
  const launcher = join(dirname(fileURLToPath(import.meta.url)), 'launcher.py');
  const child = spawn(PYTHON, [launcher, '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, SSM_SEED: seedFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // moto logs every request; keep only the tail so a failed start can be explained.
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(endpoint, child, () => tail);
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
  project.provide('motoEndpoint', endpoint);
  return stop;
}
