import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { closestCommand, failureMessage } from '../../cli/main';
import { escapeTerminal, toYaml } from '../../cli/output';
import { inProcess } from './run';

const dir = mkdtempSync(join(tmpdir(), 'karpless-output-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('YAML output reads the same in YAML 1.1 (kubectl) and 1.2', () => {
  it.each([
    'no',
    'No',
    'NO',
    'n',
    'yes',
    'y',
    'Y',
    'on',
    'On',
    'off',
    'OFF',
    'true',
    'False',
    '~',
    'null',
    '0777',
    '0x1F',
    '0b101',
    '1:20',
    '1_000',
    '12e3',
    '.inf',
    '-.NaN',
    '2024-01-01',
    '<<',
    '',
    ' padded ',
    'a: b',
    '- item',
    '#comment',
    'multi\nline',
    'plain',
  ])('the string %j', (value) => {
    const text = toYaml({ value, list: [value], [value || 'empty']: value });
    for (const version of ['1.1', '1.2'] as const) {
      expect(parse(text, { version })).toEqual({ value, list: [value], [value || 'empty']: value });
    }
  });

  it('karpless convert quotes a label value YAML 1.1 reads as a boolean', async () => {
    const input = file(
      'v1beta1.yaml',
      `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: p}
spec:
  template:
    metadata: {labels: {enabled: "no", tier: "on"}}
    spec:
      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: c}
      requirements: []
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: c}
spec:
  amiFamily: AL2023
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
`,
    );
    const result = await inProcess(['convert', input]);
    expect(result.code).toBe(0);
    const [pool] = parseAllDocuments(result.stdout, { version: '1.1' }).map((d) => d.toJS());
    expect(pool.spec.template.metadata.labels).toEqual({ enabled: 'no', tier: 'on' });
  });
});

describe('terminal output shows control characters instead of obeying them', { timeout: 60_000 }, () => {
  it.each([
    ['plain', 'plain'],
    ['tab\tand\nnewline', 'tab\tand\nnewline'],
    ['\u001b[31mred\u001b[0m', '\\x1b[31mred\\x1b[0m'],
    ['\u001b]0;title\u0007', '\\x1b]0;title\\x07'],
    ['csi\u009b2J', 'csi\\x9b2J'],
    ['bell\u0007', 'bell\\x07'],
    ['back\bspace', 'back\\x08space'],
    ['del\u007f', 'del\\x7f'],
    ['admin\u202e\u2066txt', 'admin\\u202e\\u2066txt'],
    ['über-name', 'über-name'],
  ])('%j', (text, shown) => {
    expect(escapeTerminal(text)).toBe(shown);
  });

  it('a pod name with an escape sequence is printed escaped by karpless plan', async () => {
    const pods = file(
      'evil.yaml',
      'kind: Pod\nmetadata: {name: "evil\\e[2J"}\nspec: {containers: [{name: c, resources: {requests: {cpu: "-1"}}}]}\n',
    );
    const result = await inProcess(['plan', '--manifests', 'examples/manifests', '--pods', pods]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Pod/default/evil\\x1b[2J: metadata.name: Invalid value: "evil\\u001b[2J"');
    expect(result.stderr).not.toContain('\u001b');
  });
});

describe('inputs with nothing in them, mistyped paths, and internal errors', { timeout: 60_000 }, () => {
  const empty = join(dir, 'empty');
  mkdirSync(empty, { recursive: true });
  writeFileSync(join(empty, 'README.md'), '# not a manifest');
  const services = file('service.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\n');

  it.each<[string, string[], number, string]>([
    [
      'validate of a directory without manifests',
      ['validate', empty],
      1,
      `${empty}: no NodePool, EC2NodeClass or NodeClaim found (directories are read for *.yaml, *.yml and *.json)`,
    ],
    [
      'validate of a file with no Karpenter object',
      ['validate', services],
      1,
      `${services}: no NodePool, EC2NodeClass or NodeClaim found`,
    ],
    [
      'validate of a mistyped path',
      ['validate', join(dir, 'nope')],
      1,
      `karpless validate: ${join(dir, 'nope')}: no such file or directory`,
    ],
    ['convert of an empty directory', ['convert', empty], 1, `karpless convert: no manifests found in ${empty}`],
    [
      'plan without pods',
      ['plan', '--manifests', 'examples/manifests', '--pods', services],
      1,
      `karpless plan: no Pods or workloads found in ${services}: nothing to plan`,
    ],
    [
      'plan with a mistyped --pods path',
      ['plan', '--manifests', 'examples/manifests', '--pods', join(dir, 'nope.yaml')],
      1,
      `karpless plan: ${join(dir, 'nope.yaml')}: no such file or directory`,
    ],
    ['an unknown flag', ['plan', '--pod', 'x'], 2, 'karpless plan: unknown flag --pod'],
    ['a misspelt command', ['plna'], 2, 'karpless: unknown command "plna"; did you mean "plan"?'],
    ['a command cut short', ['disrupt'], 2, 'karpless: unknown command "disrupt"; did you mean "disruption"?'],
  ])('%s: exit %i', async (_, args, code, message) => {
    const result = await inProcess(args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\b(TypeError|RangeError|ReferenceError|Error:)|\n\s+at /);
  });

  it.each([
    [
      new TypeError('x.some is not a function'),
      /^internal error \(a bug in karpless; please report it with the input that caused it\): x\.some is not a function$/,
    ],
    [new RangeError('Maximum call stack size exceeded'), /^internal error .*: Maximum call stack size exceeded$/],
    [new Error('catalog.json: not found'), /^catalog\.json: not found$/],
    [
      Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }),
      /^no AWS credentials found \(Could not load credentials from any providers\): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    ],
  ])('failureMessage(%s) names no exception class', (error, expected) => {
    expect(failureMessage(error)).toMatch(expected);
  });
});

describe('commands, unknown and misspelt', () => {
  it.each([
    ['plna', 'plan'],
    ['stauts', 'status'],
    ['validte', 'validate'],
    ['lanch-template', 'launch-template'],
    ['userdta', 'userdata'],
    ['conv', 'convert'],
  ])('"%s" suggests %s', (typed, meant) => {
    expect(closestCommand(typed)).toBe(meant);
  });

  it.each(['xyz', 'deploy', 'p'])('"%s" suggests nothing: it is far from every command', (typed) => {
    expect(closestCommand(typed)).toBeUndefined();
  });

  it('an unknown command with no near name lists the commands, without a guess', async () => {
    const result = await inProcess(['deploy']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^karpless: unknown command "deploy"\n\nUsage: karpless <command>/);
  });
});

describe('a closed pipe', () => {
  it('ends karpless quietly, without a stack trace', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child = spawn(
      process.execPath,
      ['cli/karpless.mjs', 'plan', '--manifests', 'examples/manifests', '--pods', 'examples/workloads', '--json'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Read a little, then close the pipe as `| head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
  }, 60_000);
});
