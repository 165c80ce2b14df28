import { describe, expect, it } from 'vitest';
import {
  CONTENT_TYPE_NODE_CONFIG,
  CONTENT_TYPE_SHELL_SCRIPT,
  contentTypeOf,
  looksLikeMime,
  MimeParseError,
  mimePart,
  parseMimeArchive,
  serializeMimeArchive,
} from '../../shared/amifamily/mime';
import { testdata } from './golden';

describe('MIME archives (upstream mime/test_data)', () => {
  it('parses mime_valid.txt into the nodeconfig and shell parts exactly', () => {
    const parts = parseMimeArchive(testdata('mime/mime_valid.txt'));
    expect(parts.map(contentTypeOf)).toEqual([CONTENT_TYPE_NODE_CONFIG, CONTENT_TYPE_SHELL_SCRIPT]);
    expect(parts[0]?.content).toBe(testdata('mime/nodeconfig.txt'));
    expect(parts[1]?.content).toBe(testdata('mime/shell.txt'));
  });

  it('serializes the two entries byte-identically to mime_valid.txt', () => {
    const out = serializeMimeArchive([
      mimePart(CONTENT_TYPE_NODE_CONFIG, testdata('mime/nodeconfig.txt')),
      mimePart(CONTENT_TYPE_SHELL_SCRIPT, testdata('mime/shell.txt')),
    ]);
    expect(out).toBe(testdata('mime/mime_valid.txt'));
  });

  it('round-trips mime_valid.txt byte for byte', () => {
    const text = testdata('mime/mime_valid.txt');
    expect(serializeMimeArchive(parseMimeArchive(text))).toBe(text);
  });

  it('refuses mime_bad_header.txt', () => {
    expect(() => parseMimeArchive(testdata('mime/mime_bad_header.txt'))).toThrow(MimeParseError);
  });

  it.each([
    ['no boundary parameter', 'MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n--x\n\nhi\n--x--\n'],
    ['not multipart', 'MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n'],
    ['no closing delimiter', 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\n\nhi\n'],
    ['no Content-Type', 'MIME-Version: 1.0\n\n--b\n\nhi\n--b--\n'],
  ])('refuses an archive with %s', (_name, text) => {
    expect(() => parseMimeArchive(text)).toThrow(MimeParseError);
  });

  // Upstream's al2023_mime_userdata_input.golden has no closing "--//--": Go's reader hits EOF while
  // reading the next part's headers and Karpenter treats that as the end of the archive.
  it.each([
    ['a delimiter line', '--b\n'],
    ['a delimiter without its line break', '--b'],
    ['a delimiter and headers with no blank line after them', '--b\nContent-Type: text/plain\n'],
  ])('ends the archive at EOF after %s, keeping the parts before it', (_name, tail) => {
    const text = `MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/x-shellscript\n\necho hi\n${tail}`;
    const parts = parseMimeArchive(text);
    expect(parts).toEqual([mimePart('text/x-shellscript', 'echo hi')]);
  });

  it.each([
    ['a part whose body runs to EOF', '--b\nContent-Type: text/plain\n\nbody\n'],
    ['a part with an empty header block at EOF', '--b\n\n'],
    ['a malformed header line at EOF', '--b\nnot a header\n'],
  ])('still refuses an archive that ends in %s', (_name, tail) => {
    const text = `MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\n\necho hi\n${tail}`;
    expect(() => parseMimeArchive(text)).toThrow(MimeParseError);
  });

  it('strips carriage returns and keeps extra part headers sorted', () => {
    const text =
      'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\ncontent-type: text/cloud-config\r\nX-Note: 1\r\n\r\nruncmd: []\r\n--b--\r\n';
    const parts = parseMimeArchive(text);
    expect(parts[0]?.headers).toEqual([
      ['Content-Type', 'text/cloud-config'],
      ['X-Note', '1'],
    ]);
    expect(serializeMimeArchive(parts)).not.toContain('\r');
  });

  it.each([
    ['MIME-Version: 1.0\n', true],
    ['  \nContent-Type: multipart/mixed', true],
    ['#!/bin/bash\n', false],
  ])('detects MIME by the first header (%j → %s)', (text, expected) => {
    expect(looksLikeMime(text)).toBe(expected);
  });
});
