import type { Command } from '../command';

// Placeholder until the command lands; it exits 1 so nothing mistakes it for working.
export const launchTemplateCommand: Command = {
  name: 'launch-template',
  summary: 'not implemented yet',
  usage: 'Usage: karpless launch-template\n',
  async run(_args, io) {
    io.stderr.write('karpless launch-template: not implemented yet\n');
    return 1;
  },
};
