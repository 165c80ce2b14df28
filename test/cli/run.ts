// Runs the CLI the two ways the tests need: as a child process from the repository root, as a user
// would, and in-process through main() for error matrices (same code path, no start-up cost).
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { main } from '../../cli/main';

const root = fileURLToPath(new URL('../..', import.meta.url));
const execFileAsync = promisify(execFile);

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  stderrLines: string[];
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Child process, synchronous. */
export function karpless(...args: string[]): CliRun {
  const result = spawnSync(process.execPath, ['cli/karpless.mjs', ...args], { cwd: root, encoding: 'utf8' });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    stderrLines: result.stderr.split('\n').filter((line) => line !== ''),
  };
}

/** Child process, without blocking the test worker. */
export async function karplessAsync(args: readonly string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['cli/karpless.mjs', ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

export async function inProcess(args: readonly string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}
