import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { convertCommand } from '../../cli/commands/convert';
import { buildConfiguration } from '../../shared/apis/config';
import { karpless } from './run';

// Each run starts node + tsx (about a second on an idle machine), so allow for a busy one.
describe('karpless convert (child process)', { timeout: 60_000 }, () => {
  it('writes the v1beta1 example as valid v1 YAML on stdout, notes on stderr', () => {
    const run = karpless('convert', 'examples/v1beta1');
    expect(run.status).toBe(0);
    const objects = parseAllDocuments(run.stdout).map((d) => d.toJS() as Record<string, unknown>);
    expect(objects.map((o) => `${String(o.apiVersion)} ${String(o.kind)}`)).toEqual([
      'karpenter.sh/v1 NodePool',
      'karpenter.k8s.aws/v1 EC2NodeClass',
    ]);
    const config = buildConfiguration(
      objects.map((object) => ({ file: 'stdout', line: 1, object })),
      { strictReferences: true },
    );
    expect(config.problems).toEqual([]);
    expect(config.config.nodeClasses[0]?.spec.kubelet?.maxPods).toBe(110);
    expect(config.config.nodeClasses[0]?.spec.metadataOptions?.httpPutResponseHopLimit).toBe(2);
    expect(run.stderrLines).toEqual([
      'note: examples/v1beta1/nodepool.yaml: NodePool/default: moved spec.disruption.expireAfter to spec.template.spec.expireAfter',
      'note: examples/v1beta1/nodepool.yaml: NodePool/default: consolidationPolicy WhenUnderutilized is now WhenEmptyOrUnderutilized',
      expect.stringMatching(
        /^note: examples\/v1beta1\/nodepool\.yaml: EC2NodeClass\/default: set metadataOptions\.httpPutResponseHopLimit: 2 explicitly/,
      ),
      'note: examples/v1beta1/nodepool.yaml: EC2NodeClass/default: spec.kubelet moved here from NodePool/default',
      expect.stringMatching(
        /^examples\/v1beta1\/nodepool\.yaml: EC2NodeClass\/default: spec\.amiSelectorTerms: warning: amiSelectorTerms set to \[\{alias: al2023@latest\}\]/,
      ),
    ]);
  });

  it('exits 1 with the migration error and writes nothing for Ubuntu', () => {
    const run = karpless('convert', 'test/fixtures/manifests/ubuntu');
    expect([run.status, run.stdout]).toEqual([1, '']);
    expect(run.stderrLines).toEqual([
      expect.stringMatching(
        /^test\/fixtures\/manifests\/ubuntu\/ec2nodeclass\.yaml: EC2NodeClass\/ubuntu: spec\.amiFamily: amiFamily Ubuntu cannot be converted: Karpenter v1 removed the Ubuntu family/,
      ),
      'karpless convert: nothing written, fix the errors above',
    ]);
  });

  it('exits 2 with the usage when no path is given', () => {
    const run = karpless('convert');
    expect(run.status).toBe(2);
    expect(run.stderrLines[0]).toBe('karpless convert: give at least one FILE or DIR');
    expect(run.stderr).toContain('Usage: karpless convert [flags] FILE|DIR...');
  });
});

describe('karpless convert usage', () => {
  it('has a usage text with what changes and examples (printed by --help)', () => {
    expect(convertCommand.usage).toMatch(
      /^Usage: karpless convert \[flags\] FILE\|DIR\.\.\.\n[\s\S]*WhenEmptyOrUnderutilized[\s\S]*Exit status[\s\S]*Examples:/,
    );
  });
});
