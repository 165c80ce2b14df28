// Notice builders for the notice tests.
import type { NoticeDaemonSet, NoticePod, PodsUnschedulableDetail } from '../../shared/notice';

export function noticePod(i: number, extra: Partial<NoticePod> = {}): NoticePod {
  return {
    namespace: 'shop',
    name: `web-${i}`,
    uid: `uid-${i}`,
    labels: { app: 'web' },
    ownerKind: 'ReplicaSet',
    containers: [{ name: 'app', resources: { requests: { cpu: '250m', memory: '512Mi' } } }],
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web' } },
      },
    ],
    ...extra,
  };
}

export function daemonSet(name: string, cpu = '100m'): NoticeDaemonSet {
  return {
    namespace: 'kube-system',
    name,
    template: {
      ownerKind: 'DaemonSet',
      containers: [{ name: name, resources: { requests: { cpu, memory: '64Mi' } } }],
      tolerations: [{ operator: 'Exists' }],
    },
  };
}

export function notice(
  pods: NoticePod[],
  daemonSets: NoticeDaemonSet[] = [daemonSet('aws-node')],
): PodsUnschedulableDetail {
  return { cluster: 'prod', observedAt: '2026-11-30T12:00:00Z', pods, daemonSets };
}
