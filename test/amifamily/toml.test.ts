import { describe, expect, it } from 'vitest';
import { stringifyToml, TomlFloat, type TomlValue, tomlKey, tomlString } from '../../shared/amifamily/toml';

describe('TOML writer (go-toml v2 style)', () => {
  it.each([
    ['plain', "'plain'"],
    ["it's", '"it\'s"'],
    ['a\nb', '"a\\nb"'],
    ['C:\\path', "'C:\\path'"],
  ])('quotes the string %j as %s', (text, expected) => {
    expect(tomlString(text)).toBe(expected);
  });

  it.each([
    ['max-pods', 'max-pods'],
    ['karpenter.sh/nodepool', "'karpenter.sh/nodepool'"],
    ['000-mount', '000-mount'],
  ])('writes the key %s as %s', (key, expected) => {
    expect(tomlKey(key)).toBe(expected);
  });

  it('writes plain values before sub-tables, in map order, with inline arrays', () => {
    const doc = new Map<string, TomlValue>([
      [
        'settings',
        new Map<string, TomlValue>([
          ['z', new Map<string, TomlValue>([['n', 1n]])],
          ['a', 'x'],
          ['f', new TomlFloat(1)],
          ['list', [['a', ['b', 'c']], true]],
        ]),
      ],
    ]);
    expect(stringifyToml(doc)).toBe(
      "[settings]\na = 'x'\nf = 1.0\nlist = [['a', ['b', 'c']], true]\n\n[settings.z]\nn = 1\n",
    );
  });
});
