import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const statusCommand: Command = {
  name: 'status',
  summary: 'not implemented yet',
  usage: 'Usage: karpless status\n',
  async run(_args, io) {
    io.stderr.write('karpless status: not implemented yet\n');
    return 1;
  },
};
