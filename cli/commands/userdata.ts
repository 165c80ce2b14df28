import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const userDataCommand: Command = {
  name: 'userdata',
  summary: 'not implemented yet',
  usage: 'Usage: karpless userdata\n',
  async run(_args, io) {
    io.stderr.write('karpless userdata: not implemented yet\n');
    return 1;
  },
};
