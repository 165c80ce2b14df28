#!/usr/bin/env node
// The karpless command. The CLI is TypeScript run through tsx, so `npx karpless` works after `npm ci`
// with no build step.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
