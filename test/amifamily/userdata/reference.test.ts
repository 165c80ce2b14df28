// Every §3.6 reference case: the rendered userData equals the upstream golden file once newlines are
// removed (as upstream's suite compares). Checked against the upstream files themselves: they match
// except where the newest stored upstream version predates v1.14.1 (AL2 without the
// do-not-sync-taints label, AL2023 `metadata: creationTimestamp: null`), where we follow v1.14.1.

import { describe, expect, it } from 'vitest';
import { renderUserData } from '../../../shared/amifamily/userdata';
import { fill, flat, testdata, testInput } from '../golden';

describe('AL2 reference outputs', () => {
  it.each([
    ['al2_userdata_input.golden'],
    ['al2_userdata_content_type_first_input.golden'],
    ['al2_no_mime_userdata_input.golden'],
  ])('merges %s into al2_userdata_merged.golden', (input) => {
    const out = renderUserData(testInput({ family: 'AL2', customUserData: testdata(input) }));
    expect(flat(out)).toBe(flat(fill(testdata('al2_userdata_merged.golden'))));
  });

  it('renders al2_userdata_unmerged.golden without custom userData', () => {
    const out = renderUserData(testInput({ family: 'AL2' }));
    expect(flat(out)).toBe(flat(fill(testdata('al2_userdata_unmerged.golden'))));
  });
});

describe('AL2023 reference outputs', () => {
  it.each([['mime'], ['yaml'], ['shell']])('merges the %s input', (kind) => {
    const customUserData = testdata(`al2023_${kind}_userdata_input.golden`);
    const out = renderUserData(testInput({ family: 'AL2023', customUserData }));
    expect(flat(out)).toBe(flat(fill(testdata(`al2023_${kind}_userdata_merged.golden`))));
  });

  it('renders al2023_userdata_unmerged.golden without custom userData', () => {
    const out = renderUserData(testInput({ family: 'AL2023' }));
    expect(flat(out)).toBe(flat(fill(testdata('al2023_userdata_unmerged.golden'))));
  });

  it('keeps the user parts byte for byte and puts the generated NodeConfig last', () => {
    const customUserData = testdata('al2023_mime_userdata_input.golden');
    const out = renderUserData(testInput({ family: 'AL2023', customUserData }));
    expect(out).toBe(fill(testdata('al2023_mime_userdata_merged.golden')));
  });
});

describe('Bottlerocket reference outputs', () => {
  const taints = [
    { key: 'foo', value: 'bar', effect: 'NoExecute' as const },
    { key: 'baz', value: 'bin', effect: 'NoExecute' as const },
  ];

  it('merges br_userdata_input.golden into br_userdata_merged.golden', () => {
    const input = fill(testdata('br_userdata_input.golden'), ['karpenter.sh/nodepool']);
    const out = renderUserData(testInput({ family: 'Bottlerocket', taints, customUserData: input }));
    expect(flat(out)).toBe(flat(fill(testdata('br_userdata_merged.golden'))));
  });

  it('renders br_userdata_unmerged.golden without custom userData', () => {
    const out = renderUserData(testInput({ family: 'Bottlerocket', taints }));
    expect(flat(out)).toBe(flat(fill(testdata('br_userdata_unmerged.golden'))));
  });
});

describe('Windows reference outputs', () => {
  it.each([['Windows2019'], ['Windows2022'], ['Windows2025']] as const)('%s merges the custom script', (family) => {
    const customUserData = testdata('windows_userdata_input.golden');
    const out = renderUserData(testInput({ family, capacityType: 'spot', customUserData }));
    expect(flat(out)).toBe(flat(fill(testdata('windows_userdata_merged.golden'))));
  });

  it('renders windows_userdata_unmerged.golden without custom userData', () => {
    const out = renderUserData(testInput({ family: 'Windows2022', capacityType: 'spot' }));
    expect(flat(out)).toBe(flat(fill(testdata('windows_userdata_unmerged.golden'))));
  });
});
