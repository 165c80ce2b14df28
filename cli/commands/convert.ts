import { readManifestFiles } from '../../shared/apis/load';
import { formatProblem, hasErrors } from '../../shared/apis/problems';
import { convertV1beta1 } from '../../shared/apis/v1beta1/convert';
import { type Command, parseArgs, UsageError } from '../command';
import { toYaml } from '../output';

const usage = `Usage: karpless convert [flags] FILE|DIR...

Converts Karpenter v1beta1 NodePools and EC2NodeClasses to v1, as Karpenter's v1 migration does,
and writes the v1 YAML to stdout (documents separated by ---). Notes and warnings go to stderr.

What changes:
  - apiVersions become karpenter.sh/v1 and karpenter.k8s.aws/v1
  - nodeClassRef {apiVersion, kind, name} becomes {group, kind, name}
  - spec.disruption.expireAfter moves to spec.template.spec.expireAfter
  - consolidationPolicy WhenUnderutilized becomes WhenEmptyOrUnderutilized
  - NodePool spec.template.spec.kubelet moves to the referenced EC2NodeClass spec.kubelet; NodePools
    that share a class with different kubelet settings get one EC2NodeClass each
  - amiFamily without amiSelectorTerms becomes amiSelectorTerms [{alias: <family>@latest}] (pin it!)
  - the v1beta1 IMDS hop limit default (2) is written out, since v1 defaults to 1
  - Ubuntu cannot be converted: the error explains how to pin an AMI first

Give each NodePool together with the EC2NodeClass it references. Other objects pass through
unchanged. Nothing is written to stdout when any input cannot be converted.

Flags:
  -h, --help   show this help

Exit status: 0 converted, 1 input that cannot be converted, 2 usage error.

Examples:
  karpless convert examples/v1beta1 > v1.yaml
  karpless convert nodepool.yaml ec2nodeclass.yaml | karpless validate /dev/stdin
`;

export const convertCommand: Command = {
  name: 'convert',
  summary: 'convert Karpenter v1beta1 NodePool/EC2NodeClass manifests to v1',
  usage,
  async run(args, io) {
    const parsed = parseArgs(args, {});
    if (parsed.positional.length === 0) throw new UsageError('give at least one FILE or DIR');
    const loaded = readManifestFiles(parsed.positional);
    if (loaded.documents.length === 0 && loaded.problems.length === 0) {
      io.stderr.write(
        `karpless convert: no manifests found in ${parsed.positional.join(', ')} (directories are read for *.yaml, *.yml and *.json)\n`,
      );
      return 1;
    }
    const result = convertV1beta1(loaded.documents);
    const problems = [...loaded.problems, ...result.problems];
    for (const note of result.notes) io.stderr.write(`note: ${note}\n`);
    for (const problem of problems) io.stderr.write(`${formatProblem(problem)}\n`);
    if (hasErrors(problems)) {
      io.stderr.write('karpless convert: nothing written, fix the errors above\n');
      return 1;
    }
    io.stdout.write(result.objects.map((o) => toYaml(o.object)).join('---\n'));
    return 0;
  },
};
