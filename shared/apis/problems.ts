// A problem found in user input. Every check reports all problems at once, never only the first,
// and each one names the file, the object and the field so a person can fix it without guessing.

export type Severity = 'error' | 'warning';

export interface Problem {
  severity: Severity;
  message: string;
  /** Dotted field path inside the object, e.g. spec.template.spec.requirements[0].operator. */
  path?: string;
  /** Kind/name of the object. */
  object?: string;
  file?: string;
  /** 1-based line in the file, for syntax errors. */
  line?: number;
}

/** `FILE: Kind/name: spec.path.to.field: message`, leaving out the parts that are unknown. */
export function formatProblem(problem: Problem): string {
  const parts: string[] = [];
  if (problem.file) parts.push(problem.line ? `${problem.file}:${problem.line}` : problem.file);
  if (problem.object) parts.push(problem.object);
  if (problem.path) parts.push(problem.path);
  const prefix = parts.length > 0 ? `${parts.join(': ')}: ` : '';
  return `${prefix}${problem.severity === 'warning' ? 'warning: ' : ''}${problem.message}`;
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** Raised where a configuration with errors is used (plan, synth, lambdas). */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  constructor(readonly problems: readonly Problem[]) {
    super(
      `invalid configuration:\n${problems
        .filter((p) => p.severity === 'error')
        .map((p) => `  ${formatProblem(p)}`)
        .join('\n')}`,
    );
  }
}
