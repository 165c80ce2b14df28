import { loadConfiguration } from '../../shared/apis/config';
import { formatProblem, hasErrors } from '../../shared/apis/problems';
import { type Command, parseArgs, UsageError } from '../command';

const usage = `Usage: karpless validate [flags] FILE|DIR...

Checks Karpenter v1 NodePool, EC2NodeClass and NodeClaim manifests the way a strict Kubernetes API
server with the Karpenter CRDs would (every schema and CEL rule, unknown fields), and also applies
the runtime validation Karpenter runs on a NodePool after admission (qualified-name limits on label,
taint and requirement keys; known values such as karpenter.sh/capacity-type), so a value Karpenter
would only refuse later, leaving the NodePool not ready, fails here instead. It also checks that each
NodePool's nodeClassRef names an EC2NodeClass among the given files. Directories are read
recursively (*.yaml, *.yml, *.json); multi-document YAML, JSON and kind: List are accepted, other
kinds are skipped with a note.

Every problem is printed at once on stderr, one per line:
  FILE: Kind/name: spec.path.to.field: message

Flags:
  --strict-references  a nodeClassRef naming no given EC2NodeClass is an error, as it is for
                       plan and deploy (by default it is a warning)
  --quiet              print nothing when the manifests are valid
  -h, --help           show this help

Exit status: 0 valid (warnings allowed), 1 invalid, 2 usage error.

Examples:
  karpless validate examples/manifests
  karpless validate nodepool.yaml ec2nodeclass.yaml
  karpless validate --strict-references manifests/
`;

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check Karpenter v1 NodePool/EC2NodeClass manifests and report every problem',
  usage,
  async run(args, io) {
    const parsed = parseArgs(args, { booleans: ['--strict-references', '--quiet'] });
    if (parsed.positional.length === 0) throw new UsageError('give at least one FILE or DIR');
    const result = loadConfiguration(parsed.positional, { strictReferences: parsed.flags.has('--strict-references') });
    for (const note of result.notes) io.stderr.write(`note: ${note}\n`);
    for (const problem of result.problems) io.stderr.write(`${formatProblem(problem)}\n`);
    if (hasErrors(result.problems)) {
      const errors = result.problems.filter((p) => p.severity === 'error').length;
      io.stderr.write(`karpless validate: ${errors} error${errors === 1 ? '' : 's'}\n`);
      return 1;
    }
    if (!parsed.flags.has('--quiet')) {
      const { nodePools, nodeClasses } = result.config;
      const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
      io.stdout.write(
        `valid: ${count(nodePools.length, 'NodePool', 'NodePools')}, ${count(nodeClasses.length, 'EC2NodeClass', 'EC2NodeClasses')}\n`,
      );
    }
    return 0;
  },
};
