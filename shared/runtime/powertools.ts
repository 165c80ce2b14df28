// The telemetry ports over Powertools: structured JSON logs (cluster on every line) and Embedded
// Metric Format metrics in the Karpless namespace. Metrics with dimensions go out as single metrics
// so each keeps its own dimension set.

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE } from '../contracts';
import type { Telemetry } from './telemetry';

export interface Powertools {
  logger: Logger;
  metrics: Metrics;
  telemetry: Telemetry;
}

export function powertools(serviceName: string, cluster = process.env.KARPLESS_CLUSTER_NAME ?? ''): Powertools {
  const logger = new Logger({ serviceName, persistentKeys: { cluster } });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName,
    ...(cluster ? { defaultDimensions: { cluster } } : {}),
  });
  const telemetry: Telemetry = {
    log: {
      debug: (message, fields) => logger.debug(message, fields ?? {}),
      info: (message, fields) => logger.info(message, fields ?? {}),
      warn: (message, fields) => logger.warn(message, fields ?? {}),
      error: (message, fields) => logger.error(message, fields ?? {}),
    },
    metrics: {
      record(name, unit, value, dimensions) {
        const powertoolsUnit = unit === 'Milliseconds' ? MetricUnit.Milliseconds : MetricUnit.Count;
        if (!dimensions) {
          metrics.addMetric(name, powertoolsUnit, value);
          return;
        }
        const single = metrics.singleMetric();
        single.addDimensions(dimensions);
        single.addMetric(name, powertoolsUnit, value);
      },
    },
  };
  return { logger, metrics, telemetry };
}

/** A cold-start dependency: built on first use, built again after a failure. */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= build().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
