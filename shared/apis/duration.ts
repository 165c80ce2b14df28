// Go-style durations ("1h30m", "90s", "720h"), as Karpenter's CRDs and kubelet flags use them.

const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** Seconds in a Go duration string, or undefined when it is not one. */
export function parseDurationSeconds(text: string): number | undefined {
  if (text === '0') return 0;
  if (!GO_DURATION.test(text)) return undefined;
  let total = 0;
  for (const part of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(part[1]) * (UNIT_SECONDS[part[2] ?? 's'] ?? 0);
  }
  return total;
}

/** Formats whole seconds the way Go's time.Duration.String does: 1m0s, 1h30m0s, 45s, 0s. */
export function formatGoDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  rest -= minutes * 60;
  const secs = Number.isInteger(rest) ? String(rest) : String(Number(rest.toFixed(9)));
  if (hours > 0) return `${sign}${hours}h${minutes}m${secs}s`;
  if (minutes > 0) return `${sign}${minutes}m${secs}s`;
  return `${sign}${secs}s`;
}
