// Starts a moto AWS emulator on a free 127.0.0.1 port and stops it again: used by the integration
// test harness (through its seeding/fault launcher) and by the catalog generator (plain moto_server).

import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface MotoServer {
  endpoint: string;
  stop(): Promise<void>;
}

export interface MotoServerOptions {
  /** Program to run, e.g. moto_server or python3. */
  command: string;
  /** Arguments before `-H 127.0.0.1 -p <port>`, e.g. the launcher script. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Appended to the error when the program cannot be started at all. */
  installHint: string;
  readyTimeoutMs?: number;
}

export function freePort(): Promise<number> {
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

export async function startMotoServer(options: MotoServerOptions): Promise<MotoServer> {
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(options.command, [...(options.args ?? []), '-H', '127.0.0.1', '-p', String(port)], {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // moto logs every request; keep only the tail so that a failed start can be explained.
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | undefined;
  child.on('error', (error) => {
    spawnError = new Error(`cannot start ${options.command} (${error.message}); ${options.installHint}`);
  });

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || spawnError) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (spawnError) throw spawnError;
    if (child.exitCode !== null) throw new Error(`${options.command} exited with ${child.exitCode}:\n${tail}`);
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) return { endpoint, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`moto did not answer on ${endpoint} within ${timeoutMs / 1000}s:\n${tail}`);
}
