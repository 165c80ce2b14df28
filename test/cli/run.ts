// Runs the real CLI in a child process from the repository root, as a user would.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  stderrLines: string[];
}

export function karpless(...args: string[]): CliRun {
  const result = spawnSync(process.execPath, ['cli/karpless.mjs', ...args], { cwd: root, encoding: 'utf8' });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    stderrLines: result.stderr.split('\n').filter((line) => line !== ''),
  };
}
