import { describe, expect, it } from 'vitest';
import { nodeLabels, renderUserData, UserDataError } from '../../../shared/amifamily/userdata';
import { testInput } from '../golden';

const DIRS = "'--dirs', '/var/lib/containerd', '/var/lib/kubelet', '/var/log/pods'";

describe('instanceStorePolicy: RAID0', () => {
  it('AL2 passes --local-disks raid0 last', () => {
    const out = renderUserData(testInput({ family: 'AL2', instanceStorePolicy: 'RAID0' }));
    expect(out).toMatch(/--kubelet-extra-args '[^']*' \\\n--local-disks raid0\n/);
  });

  it('AL2023 sets the local storage strategy', () => {
    const out = renderUserData(testInput({ family: 'AL2023', instanceStorePolicy: 'RAID0' }));
    expect(out).toContain('instance:\n    localStorage:\n      strategy: RAID0\n');
  });

  it.each([
    ['1.45.0', true],
    ['v1.45.2', true],
    [undefined, true],
    ['1.46.0', false],
    ['1.50.1', false],
    ['latest', false],
  ])('Bottlerocket %s uses the --dirs bind form: %s', (version, dirs) => {
    const out = renderUserData(
      testInput({
        family: 'Bottlerocket',
        instanceStorePolicy: 'RAID0',
        ...(version !== undefined ? { bottlerocketVersion: version } : {}),
      }),
    );
    const bind = dirs
      ? `['apiclient', 'ephemeral-storage', 'bind', ${DIRS}]`
      : "['apiclient', 'ephemeral-storage', 'bind']";
    expect(out).toContain(
      `[settings.bootstrap-commands.000-mount-instance-storage]\ncommands = [['apiclient', 'ephemeral-storage', 'init'], ${bind}]\nmode = 'always'\nessential = true\n`,
    );
  });

  it("Bottlerocket keeps the user's bootstrap commands alongside", () => {
    const customUserData = `[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = false\n`;
    const out = renderUserData(testInput({ family: 'Bottlerocket', instanceStorePolicy: 'RAID0', customUserData }));
    expect(out).toContain('[settings.bootstrap-commands.000-mount-instance-storage]');
    expect(out).toContain(
      "[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = false\n",
    );
    expect(out.indexOf('000-mount')).toBeLessThan(out.indexOf('111-say-hello'));
  });

  it('Windows ignores it', () => {
    expect(renderUserData(testInput({ family: 'Windows2022', instanceStorePolicy: 'RAID0' }))).not.toMatch(/raid/i);
  });
});

describe('cluster DNS', () => {
  it('AL2 passes --ip-family ipv6 for an IPv6 cluster DNS', () => {
    const out = renderUserData(
      testInput({ family: 'AL2', kubelet: { maxPods: 110, clusterDNS: ['fd7b:1ac6:e2f5::a'] } }),
    );
    expect(out).toContain("'Y2EtYnVuZGxlCg==' \\\n--ip-family ipv6 \\\n--dns-cluster-ip 'fd7b:1ac6:e2f5::a' \\\n");
  });

  it('AL2 does not for an IPv4 cluster DNS', () => {
    expect(renderUserData(testInput({ family: 'AL2' }))).not.toContain('--ip-family');
  });
});

describe('labels and taints', () => {
  it.each([
    'node-restriction.kubernetes.io/team',
    'kubernetes.io/arch',
    'k8s.io/thing',
    'topology.kubernetes.io/zone',
    'node.kubernetes.io/instance-type',
    'sub.k8s.io/other',
  ])('drops the restricted label %s from every family', (key) => {
    for (const family of ['AL2', 'AL2023', 'Bottlerocket', 'Windows2022'] as const) {
      const out = renderUserData(testInput({ family, labels: { [key]: 'x', 'example.com/kept': 'yes' } }));
      expect(out).not.toContain(key);
      expect(out).toContain('example.com/kept');
    }
  });

  it('keeps labels whose domain only contains a restricted name', () => {
    expect(nodeLabels('AL2', { 'kubernetes.io.example.com/ok': 'x', 'notk8s.io/ok': 'y' }, 'spot')).toEqual({
      'kubernetes.io.example.com/ok': 'x',
      'notk8s.io/ok': 'y',
      'karpenter.sh/capacity-type': 'spot',
      'karpenter.sh/do-not-sync-taints': 'true',
    });
  });

  it('does not add do-not-sync-taints for Custom', () => {
    expect(nodeLabels('Custom', {}, 'on-demand')).toEqual({ 'karpenter.sh/capacity-type': 'on-demand' });
  });

  it('registers the unregistered taint once', () => {
    const out = renderUserData(
      testInput({ family: 'AL2', taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
    );
    expect(out.match(/karpenter\.sh\/unregistered/g)).toHaveLength(1);
  });

  it('Bottlerocket replaces the user taints and merges labels under Karpenter values', () => {
    const customUserData =
      "[settings.kubernetes.node-taints]\nold = ['x:NoSchedule']\n[settings.kubernetes.node-labels]\nmine = 'kept'\n'karpenter.sh/capacity-type' = 'user'\n";
    const out = renderUserData(testInput({ family: 'Bottlerocket', capacityType: 'spot', customUserData }));
    expect(out).not.toContain('old');
    expect(out).toContain("mine = 'kept'");
    expect(out).toContain("'karpenter.sh/capacity-type' = 'spot'");
  });
});

describe('custom userData', () => {
  it('passes Custom through unchanged, injecting nothing', () => {
    const customUserData = '#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster\n';
    expect(renderUserData(testInput({ family: 'Custom', customUserData }))).toBe(customUserData);
    expect(renderUserData(testInput({ family: 'Custom' }))).toBe('');
  });

  it('Bottlerocket drops unknown settings.kubernetes keys and passes other settings through', () => {
    const customUserData =
      "[settings.kubernetes]\n'unknown-setting' = 'x'\nseccomp-default = true\n[settings.kubernetes.labels]\na = 'b'\n[settings.host-containers.admin]\nenabled = true\n";
    const out = renderUserData(testInput({ family: 'Bottlerocket', customUserData }));
    expect(out).not.toContain('unknown-setting');
    expect(out).not.toContain('[settings.kubernetes.labels]');
    expect(out).toContain('seccomp-default = true');
    expect(out).toContain('[settings.host-containers.admin]\nenabled = true');
  });

  it.each([
    ['AL2', 'MIME-Version: 1.0\nContent-Type: multipart/mixed\n\nno boundary\n', /spec\.userData: .*MIME/],
    [
      'AL2023',
      'Content-Type: multipart/mixed; boundary="//"\nMIME_VERSION = 1.0\n\n--//\n\nx\n--//--\n',
      /malformed header/,
    ],
    ['AL2023', 'Content-Type: multipart/mixed; boundary="//"\n\n--//\n\nunterminated\n', /spec\.userData: .*closing/],
    [
      'Bottlerocket',
      '[settings.kubernetes\napi-server = 1',
      /spec\.userData: Bottlerocket userData must be TOML settings: is not valid TOML/,
    ],
    [
      'Bottlerocket',
      '[settings.kubernetes]\nmax-pods = "many"\n',
      /settings\.kubernetes\.max-pods must be an integer, got string/,
    ],
    [
      'Bottlerocket',
      '[settings.kubernetes.node-labels]\na = 1\n',
      /settings\.kubernetes\.node-labels\.a must be a string/,
    ],
    ['Bottlerocket', "settings = 'x'\n", /settings must be a table/],
  ] as const)('%s refuses malformed userData %j', (family, customUserData, message) => {
    const render = () => renderUserData(testInput({ family, customUserData }));
    expect(render).toThrow(UserDataError);
    expect(render).toThrow(message);
  });

  it('names the kubelet field for a bad duration', () => {
    const render = () =>
      renderUserData(testInput({ kubelet: { maxPods: 1, evictionSoftGracePeriod: { 'memory.available': 'soon' } } }));
    expect(render).toThrow('spec.kubelet.evictionSoftGracePeriod[memory.available]: "soon" is not a duration');
  });

  it('AL2023 needs the cluster CIDR', () => {
    const { clusterCIDR: _omit, ...input } = testInput({ family: 'AL2023' });
    expect(() => renderUserData(input)).toThrow(/resolving cluster CIDR/);
  });

  it('AL2023 treats a YAML list as a shell script, not a NodeConfig', () => {
    const out = renderUserData(testInput({ family: 'AL2023', customUserData: '- a\n- b\n' }));
    expect(out).toContain('Content-Type: text/x-shellscript; charset="us-ascii"\n\n- a\n- b\n');
  });
});
