// Runs a real kubectl against the fake API server: a kubeconfig for its URL (and token), a cache
// directory of its own, and the binary from $KUBECTL or the PATH (.ci/run installs Debian's
// kubernetes-client where the machine has none). No test framework is imported: the demo uses it.

import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A kubeconfig naming one cluster, user and context, as `aws eks update-kubeconfig` writes one. */
export function kubeconfigText(server: string, options: { token?: string; ca?: string; name?: string } = {}): string {
  const name = options.name ?? 'karpless-fake';
  const cluster = options.ca ? `    certificate-authority-data: ${Buffer.from(options.ca).toString('base64')}\n` : '';
  // A user without credentials makes kubectl prompt for a username; a server without a token accepts any.
  const user = `    token: ${options.token ?? 'karpless-fake'}\n`;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${server}`,
    cluster.trimEnd(),
    'users:',
    `- name: ${name}`,
    '  user:',
    user.trimEnd(),
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}`,
    `current-context: ${name}`,
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

/** Writes a kubeconfig into a fresh temporary directory and returns its path. */
export function writeKubeconfig(server: string, options: { token?: string; ca?: string } = {}): string {
  const path = join(mkdtempSync(join(tmpdir(), 'karpless-kubeconfig-')), 'config');
  writeFileSync(path, kubeconfigText(server, options), { mode: 0o600 });
  return path;
}

/** The kubectl to run: $KUBECTL, else the first kubectl on the PATH; undefined when there is none. */
export function findKubectl(): string | undefined {
  if (process.env.KUBECTL) return process.env.KUBECTL;
  try {
    return execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class Kubectl {
  private readonly cacheDir = mkdtempSync(join(tmpdir(), 'karpless-kubectl-cache-'));

  constructor(
    readonly binary: string,
    readonly kubeconfig: string,
  ) {}

  run(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile(
        this.binary,
        [`--kubeconfig=${this.kubeconfig}`, `--cache-dir=${this.cacheDir}`, ...args],
        { env: { ...process.env, HOME: this.cacheDir, KUBECONFIG: this.kubeconfig }, timeout: 120_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  /** Runs and fails with kubectl's own error text unless it exits 0. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  }
}
