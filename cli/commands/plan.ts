import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const planCommand: Command = {
  name: 'plan',
  summary: 'not implemented yet',
  usage: 'Usage: karpless plan\n',
  async run(_args, io) {
    io.stderr.write('karpless plan: not implemented yet\n');
    return 1;
  },
};
