// Setup file of the integration project: a test during which any function made a call its role does
// not allow fails, naming each denied request (the call, the action, the resource and its context).

import { afterAll, afterEach } from 'vitest';
import { formatDenial, takeDenials } from './simulator';

function failOnDenials(when: string): void {
  const denials = takeDenials();
  if (denials.length === 0) return;
  throw new Error(
    `IAM would deny ${denials.length} request(s) ${when}; grant them in infra/iam.ts (or stop making the call):\n` +
      denials.map((d) => `  ${formatDenial(d)}`).join('\n'),
  );
}

afterEach(() => failOnDenials('during this test'));
afterAll(() => failOnDenials('after the last test of this file'));
