// Dispatches `karpless <command> …` to the command modules.

import type { Command, IO } from './command';
import { UsageError } from './command';
import { convertCommand } from './commands/convert';
import { launchTemplateCommand } from './commands/launch-template';
import { planCommand } from './commands/plan';
import { statusCommand } from './commands/status';
import { userDataCommand } from './commands/userdata';
import { validateCommand } from './commands/validate';

export const commands: readonly Command[] = [
  validateCommand,
  convertCommand,
  planCommand,
  statusCommand,
  userDataCommand,
  launchTemplateCommand,
];

export function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: karpless <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun 'karpless <command> --help' for a command's flags.\n`;
}

export async function main(argv: readonly string[], io: IO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io[name === undefined ? 'stderr' : 'stdout'].write(usage());
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`karpless: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
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
    io.stderr.write(`karpless ${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
