import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const convertCommand: Command = {
  name: 'convert',
  summary: 'not implemented yet',
  usage: 'Usage: karpless convert\n',
  async run(_args, io) {
    io.stderr.write('karpless convert: not implemented yet\n');
    return 1;
  },
};
