// What the CLI writes, made safe to read: text for a terminal with control characters shown instead
// of obeyed, and YAML that YAML 1.1 readers (kubectl, client-go) read as the same values.

import { Document, isScalar, visit } from 'yaml';
import type { Output } from './command';

// C0 controls but tab, newline and carriage return; DEL and C1 controls (0x9b is a one-byte CSI);
// bidirectional overrides and isolates, which reorder what a reader sees (Trojan Source).
const UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Shows control characters as \xNN or \uNNNN, so a name cannot move the cursor, recolor or retitle a terminal. */
export function escapeTerminal(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** An Output that escapes everything written through it. */
export function escapingOutput(output: Output): Output {
  return { write: (text: string) => output.write(escapeTerminal(text)) };
}

const MERGE_TAG = 'tag:yaml.org,2002:merge';

/**
 * YAML a 1.1 reader reads as a 1.2 reader does: strings such as "no", "on", "y", "0777" or "1:20",
 * which YAML 1.1 resolves to booleans and numbers, are quoted. Kubernetes reads YAML 1.1.
 */
export function toYaml(value: unknown): string {
  // The 1.1 schema decides which strings need quotes. Its merge tag would claim every "<<" string
  // and print it plain (a merge key to a 1.1 reader), so it is left out and "<<" is quoted here.
  const document = new Document(value, {
    version: '1.1',
    customTags: (tags) => tags.filter((tag) => (typeof tag === 'string' ? tag !== 'merge' : tag.tag !== MERGE_TAG)),
  });
  visit(document, {
    Scalar(_, node) {
      if (isScalar(node) && node.value === '<<') node.type = 'QUOTE_DOUBLE';
    },
  });
  return document.toString({ lineWidth: 0 });
}
