import { describe, expect, it } from 'vitest';
import { loadDeployConfiguration } from '../../infra/configuration';

describe('loadDeployConfiguration', () => {
  it('returns the validated, defaulted example configuration', () => {
    const config = loadDeployConfiguration(['examples/manifests']);
    expect(config.nodePools.map((p) => p.metadata.name).sort()).toEqual(['general', 'gpu']);
    expect(config.nodeClasses.every((c) => c.spec.metadataOptions?.httpPutResponseHopLimit !== undefined)).toBe(true);
  });

  it('fails synth when a NodePool names an EC2NodeClass that is not deployed', () => {
    expect(() => loadDeployConfiguration(['test/fixtures/manifests/dangling'])).toThrow(
      /NodePool\/lonely: spec\.template\.spec\.nodeClassRef/,
    );
  });

  it('fails synth with every error of an invalid manifest', () => {
    expect(() => loadDeployConfiguration(['test/fixtures/manifests/invalid'])).toThrow(/invalid configuration:\n/);
  });

  it('refuses an empty manifest list', () => {
    expect(() => loadDeployConfiguration([])).toThrow(/no manifests given: pass -c manifests=/);
  });
});
