// The shape every karpless sub-command has. Commands write to the given streams (never to console)
// and return an exit code: 0 success, 1 invalid input or failed work, 2 usage error.

export interface Output {
  write(text: string): unknown;
}

export interface IO {
  stdout: Output;
  stderr: Output;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], io: IO): Promise<number>;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Minimal flag parser: --flag value, --flag=value, boolean flags, and positional arguments. */
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
}

export function parseArgs(
  args: readonly string[],
  spec: { booleans?: readonly string[]; values?: readonly string[] },
): ParsedArgs {
  const booleans = new Set(spec.booleans ?? []);
  const values = new Set(spec.values ?? []);
  const parsed: ParsedArgs = { positional: [], flags: new Map() };
  const add = (name: string, value: string) => parsed.flags.set(name, [...(parsed.flags.get(name) ?? []), value]);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      parsed.positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (booleans.has(name)) {
      if (eq >= 0) throw new UsageError(`${name} takes no value`);
      add(name, 'true');
    } else if (values.has(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      add(name, value);
    } else {
      throw new UsageError(`unknown flag ${name}`);
    }
  }
  return parsed;
}

/** All values of a repeatable flag; a flag followed by several values before the next flag is not supported, use repetition or commas. */
export function flagValues(parsed: ParsedArgs, name: string): string[] {
  return parsed.flags.get(name) ?? [];
}

export function flagValue(parsed: ParsedArgs, name: string): string | undefined {
  const all = parsed.flags.get(name);
  return all?.[all.length - 1];
}

export function requireFlag(parsed: ParsedArgs, name: string): string {
  const value = flagValue(parsed, name);
  if (value === undefined) throw new UsageError(`missing required flag ${name}`);
  return value;
}
