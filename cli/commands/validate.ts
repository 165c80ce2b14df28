import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const validateCommand: Command = {
  name: 'validate',
  summary: 'not implemented yet',
  usage: 'Usage: karpless validate\n',
  async run(_args, io) {
    io.stderr.write('karpless validate: not implemented yet\n');
    return 1;
  },
};
