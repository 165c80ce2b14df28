// Dispatches `karpless <command> …` to the command modules. Commands load lazily so that a quick
// command does not pay for compiling and importing every other one (the AWS SDK, the catalog).

import { isMissingCredentials } from '../shared/providers/aws-errors';
import type { Command, IO } from './command';
import { UsageError } from './command';
import { escapingOutput } from './output';

interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: 'validate',
    summary: 'check Karpenter v1 manifests as the API server would',
    load: async () => (await import('./commands/validate')).validateCommand,
  },
  {
    name: 'convert',
    summary: 'convert v1beta1 NodePools and EC2NodeClasses to v1',
    load: async () => (await import('./commands/convert')).convertCommand,
  },
  {
    name: 'plan',
    summary: 'dry run: which nodes would be launched for these pods, at what price, and why a pod fits nowhere',
    load: async () => (await import('./commands/plan')).planCommand,
  },
  {
    name: 'status',
    summary: 'resolve EC2NodeClasses against AWS and show their readiness conditions',
    load: async () => (await import('./commands/status')).statusCommand,
  },
  {
    name: 'disruption',
    summary: 'dry run of drift and expiration: what would be disrupted now, which budget decides, the replacements',
    load: async () => (await import('./commands/disruption')).disruptionCommand,
  },
  {
    name: 'userdata',
    summary: 'print the userData a node would boot with (offline)',
    load: async () => (await import('./commands/userdata')).userDataCommand,
  },
  {
    name: 'launch-template',
    summary: 'print the CreateLaunchTemplate request for a node (offline)',
    load: async () => (await import('./commands/launch-template')).launchTemplateCommand,
  },
];

export function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: karpless <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun 'karpless <command> --help' for a command's flags.\n`;
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps): how far a typo is from a name. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The command a misspelt name most likely meant: the nearest within two edits (one for short names),
 * or the only command the name starts (`karpless disrupt`). Nothing when it is a guess at best.
 */
export function closestCommand(name: string): string | undefined {
  const typed = name.toLowerCase();
  const prefixed = commands.filter((c) => typed.length >= 3 && c.name.startsWith(typed));
  if (prefixed.length === 1) return prefixed[0]?.name;
  const limit = typed.length <= 4 ? 1 : 2;
  const ranked = commands
    .map((c) => ({ name: c.name, distance: editDistance(typed, c.name) }))
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance);
  if (ranked.length === 0 || ranked[0]?.distance === ranked[1]?.distance) return undefined;
  return ranked[0]?.name;
}

// Errors of these classes are bugs in karpless, not problems of the input: their messages are
// phrased for programmers, so the user is told so rather than shown "x is not a function" alone.
const INTERNAL_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

/** The message for a failed command: ours as they are, programming errors flagged as bugs. */
export function failureMessage(error: unknown): string {
  if (isMissingCredentials(error)) {
    return `no AWS credentials found (${(error as Error).message}): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run 'aws sso login', then try again`;
  }
  if (INTERNAL_ERRORS.some((type) => error instanceof type)) {
    return `internal error (a bug in karpless; please report it with the input that caused it): ${(error as Error).message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export async function main(argv: readonly string[], raw: IO): Promise<number> {
  const io: IO = { stdout: escapingOutput(raw.stdout), stderr: escapingOutput(raw.stderr) };
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io[name === undefined ? 'stderr' : 'stdout'].write(usage());
    return name === undefined ? 2 : 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    const guess = closestCommand(name);
    const hint = guess ? `; did you mean "${guess}"?` : '';
    io.stderr.write(`karpless: unknown command "${name}"${hint}\n\n${usage()}`);
    return 2;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`karpless ${command.name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    io.stderr.write(`karpless ${command.name}: ${failureMessage(error)}\n`);
    return 1;
  }
}
