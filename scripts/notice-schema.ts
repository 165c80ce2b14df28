// Writes docs/notice.schema.json from the notice's field table (shared/notice/schema.ts) and formats
// it as the repository's formatter does. test/notice/schema.test.ts fails when the committed file
// and the table disagree.
// Usage: npx tsx scripts/notice-schema.ts

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { noticeJsonSchemaText } from '../shared/notice/schema';

const root = join(import.meta.dirname, '..');
const path = join(root, 'docs', 'notice.schema.json');
writeFileSync(path, noticeJsonSchemaText());
execFileSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', path], { stdio: 'inherit' });
process.stdout.write(`wrote ${path}\n`);
