// Loads the user's manifests for deployment: every error (including a NodePool whose nodeClassRef
// names no EC2NodeClass) stops synth with the problem lines.

import { type Configuration, requireConfiguration } from '../shared/apis/config';

export function loadDeployConfiguration(paths: readonly string[]): Configuration {
  if (paths.length === 0)
    throw new Error('no manifests given: pass -c manifests=FILE|DIR[,…] with your NodePool and EC2NodeClass files');
  const { config } = requireConfiguration(paths);
  if (config.nodePools.length === 0) {
    throw new Error(
      `no NodePool found in ${paths.join(', ')}: karpless needs at least one NodePool to provision nodes`,
    );
  }
  return config;
}
