// The functions' metrics flush: an idle run (nothing counted) writes nothing, where Powertools would
// warn once per run; a run that counted something still writes its EMF document.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { powertools } from '../../shared/runtime/powertools';

describe('powertools metrics flush', () => {
  afterEach(() => vi.restoreAllMocks());

  function capture(): () => string {
    let written = '';
    const record = (chunk: unknown) => {
      written += String(chunk);
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(record);
    vi.spyOn(process.stderr, 'write').mockImplementation(record);
    return () => written;
  }

  it('writes nothing, and warns of nothing, when the run counted nothing', () => {
    const tools = powertools('watcher', 'demo');
    const written = capture();
    tools.metrics.publishStoredMetrics();
    expect(written()).toBe('');
  });

  it('writes the EMF document of what the run counted', () => {
    const tools = powertools('watcher', 'demo');
    const written = capture();
    tools.telemetry.metrics.record('PodsNoticed', 'Count', 3);
    tools.metrics.publishStoredMetrics();
    const document = JSON.parse(written()) as { PodsNoticed: number; cluster: string };
    expect(document).toMatchObject({ PodsNoticed: 3, cluster: 'demo' });
    // Flushed: a second, idle flush writes nothing again.
    tools.metrics.publishStoredMetrics();
    expect(written().trim().split('\n')).toHaveLength(1);
  });
});
