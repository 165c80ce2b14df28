// The demo's timeline: one line per thing that happened, with the seconds since the start and who
// did it, so a reader can follow pods becoming nodes and an interruption becoming a replacement.

export type Actor =
  | 'aws'
  | 'stack'
  | 'cluster'
  | 'kubelet'
  | 'scheduler'
  | 'watcher'
  | 'provision'
  | 'interruption'
  | 'drift'
  | 'gc'
  | 'demo';

export interface TimelineEntry {
  atMs: number;
  actor: Actor;
  message: string;
}

export class Timeline {
  readonly entries: TimelineEntry[] = [];
  private readonly start = Date.now();

  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  add(actor: Actor, message: string): void {
    const entry = { atMs: Date.now() - this.start, actor, message };
    this.entries.push(entry);
    this.write(`${`+${(entry.atMs / 1000).toFixed(1)}s`.padStart(8)}  ${actor.padEnd(12)} ${message}`);
  }
}
