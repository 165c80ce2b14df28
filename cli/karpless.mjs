#!/usr/bin/env node
// The karpless command. The CLI is TypeScript run through tsx, so `npx karpless` works after `npm ci`
// with no build step.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// A reader that went away (`karpless plan … | head`) is not a failure worth a stack trace: stop
// quietly with the status the command has reached.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// Whatever escapes main() is a bug; say so in one line instead of printing a stack trace.
const internal = (error) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`karpless: internal error (a bug in karpless; please report it): ${message}\n`);
  process.exit(1);
};
process.on('uncaughtException', internal);
process.on('unhandledRejection', internal);

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
