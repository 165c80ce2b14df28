// Dispatches `karpless <command> …` to the command modules. Commands load lazily so that a quick
// command does not pay for compiling and importing every other one (the AWS SDK, the catalog).

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

// Errors of these classes are bugs in karpless, not problems of the input: their messages are
// phrased for programmers, so the user is told so rather than shown "x is not a function" alone.
const INTERNAL_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

/** The message for a failed command: ours as they are, programming errors flagged as bugs. */
export function failureMessage(error: unknown): string {
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
    io.stderr.write(`karpless: unknown command "${name}"\n\n${usage()}`);
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
