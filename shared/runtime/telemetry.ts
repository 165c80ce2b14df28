// Logs and metrics as ports, so the core writes structured lines and counts without knowing about
// Powertools: the handlers hand in Powertools-backed implementations (see environment.ts), unit
// tests hand in recorders.

export type LogFields = Record<string, unknown>;

export interface RuntimeLog {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export type MetricUnitName = 'Count' | 'Milliseconds';

export interface RuntimeMetrics {
  /** One data point of a metric named in shared/contracts METRIC, with optional dimensions. */
  record(name: string, unit: MetricUnitName, value: number, dimensions?: Record<string, string>): void;
}

export const silentLog: RuntimeLog = { debug() {}, info() {}, warn() {}, error() {} };

export const noMetrics: RuntimeMetrics = { record() {} };

export interface Telemetry {
  log: RuntimeLog;
  metrics: RuntimeMetrics;
}

/**
 * A scheduled run that did not do its job, as opposed to work it chose not to do (nothing pending,
 * a budget that blocks): the handler throws it so Lambda counts an error and the alarm fires.
 */
export class RunFailedError extends Error {
  override readonly name = 'RunFailedError';
}
