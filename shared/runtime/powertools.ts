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

/**
 * Metrics whose flush at the end of an invocation says nothing when the run counted nothing. Powertools
 * logs a warning for every empty flush, and an idle run (a watcher minute with no pending pod, every
 * metric with dimensions already sent as a single metric) is normal: that warning would be one log
 * line per function per run in CloudWatch, and 200 lines of noise in the tests.
 */
class QuietMetrics extends Metrics {
  override publishStoredMetrics(): this {
    return this.hasStoredMetrics() ? super.publishStoredMetrics() : this;
  }
}

export function powertools(serviceName: string, cluster = process.env.KARPLESS_CLUSTER_NAME ?? ''): Powertools {
  const logger = new Logger({ serviceName, persistentKeys: { cluster } });
  const metrics = new QuietMetrics({
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
