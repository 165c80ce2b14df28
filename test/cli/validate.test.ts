import { describe, expect, it } from 'vitest';
import { validateCommand } from '../../cli/commands/validate';
import { karpless } from './run';

const INVALID = 'test/fixtures/manifests/invalid/manifests.yaml';

function capture() {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: { write: (t: string) => (out.stdout += t) },
    stderr: { write: (t: string) => (out.stderr += t) },
  };
  return { out, io };
}

// Each child process starts node + tsx (about a second on an idle machine), so allow for a busy one.
describe('karpless validate (child process)', { timeout: 60_000 }, () => {
  it('exits 0 for the examples and says what it found', () => {
    const run = karpless('validate', 'examples/manifests');
    expect([run.status, run.stdout, run.stderr]).toEqual([0, 'valid: 2 NodePools, 2 EC2NodeClasses\n', '']);
  });

  it('exits 1 and prints every problem as FILE: Kind/name: path: message, syntax errors with their line', () => {
    const run = karpless('validate', 'test/fixtures/manifests/invalid');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderrLines).toEqual([
      `note: ${INVALID}: skipped ConfigMap/settings (not a Karpenter v1 kind)`,
      expect.stringMatching(/^test\/fixtures\/manifests\/invalid\/syntax\.yaml:\d+: YAML syntax error: /),
      `${INVALID}: NodePool/broken: spec.weight: Invalid value: 0: should be greater than or equal to 1`,
      `${INVALID}: NodePool/broken: spec.template.spec.requirements[0].values: key karpenter.sh/capacity-type must include at least one of the known values "spot", "on-demand", "reserved"; no node could match ["cheap"]`,
      `${INVALID}: NodePool/broken: spec.template.spec.expireAfter: Invalid value: "30d": must be a duration of whole hours, minutes or seconds (e.g. 720h, 90m) or Never`,
      `${INVALID}: EC2NodeClass/default: spec.amiSelectorTerms[0].alias: windows families may only specify version 'latest'`,
      `${INVALID}: EC2NodeClass/default: spec.tags[kubernetes.io/cluster/test]: tag contains a restricted tag matching kubernetes.io/cluster/`,
      `${INVALID}: EC2NodeClass/default: spec.unknownField: unknown field "unknownField"`,
      `${INVALID}: EC2NodeClass/default: spec: must specify exactly one of ['role', 'instanceProfile']`,
      'karpless validate: 8 errors',
    ]);
  });

  it('exits 2 with the usage when no path is given', () => {
    const run = karpless('validate');
    expect(run.status).toBe(2);
    expect(run.stderrLines[0]).toBe('karpless validate: give at least one FILE or DIR');
    expect(run.stderr).toContain('Usage: karpless validate [flags] FILE|DIR...');
  });
});

describe('karpless validate (in process)', () => {
  it('warns about a missing EC2NodeClass but exits 0', async () => {
    const { out, io } = capture();
    expect(await validateCommand.run(['--quiet', 'test/fixtures/manifests/dangling'], io)).toBe(0);
    expect(out.stderr).toBe(
      'test/fixtures/manifests/dangling/nodepool.yaml: NodePool/lonely: spec.template.spec.nodeClassRef: warning: EC2NodeClass/missing is not among the given manifests: add the file that defines it, or fix the name\n',
    );
    expect(out.stdout).toBe('');
  });

  it('makes the missing EC2NodeClass an error with --strict-references', async () => {
    const { out, io } = capture();
    expect(await validateCommand.run(['--strict-references', 'test/fixtures/manifests/dangling'], io)).toBe(1);
    expect(out.stderr.split('\n')[0]).toMatch(/nodeClassRef: EC2NodeClass\/missing is not among the given manifests/);
  });

  it('has a usage text with its flags and examples (printed by --help)', () => {
    expect(validateCommand.usage).toMatch(
      /^Usage: karpless validate \[flags\] FILE\|DIR\.\.\.\n[\s\S]*--strict-references[\s\S]*Exit status[\s\S]*Examples:/,
    );
  });
});
