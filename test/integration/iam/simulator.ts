// Evaluates authorization requests against a function's identity policies with
// @cloud-copilot/iam-simulate (AWS's evaluation logic and service authorization data, offline), and
// keeps every denial in a ledger that the integration project's setup file checks after each test.

import { runSimulation, runUnsafeSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { AuthorizationRequest } from './authorization';
import type { FunctionRole } from './policies';

export interface Denial {
  function: string;
  call: string;
  request: AuthorizationRequest;
  result: string;
}

const ledger: Denial[] = [];

/** The denials recorded since the last call (the setup file fails the test that caused them). */
export function takeDenials(): Denial[] {
  return ledger.splice(0, ledger.length);
}

export function formatDenial(d: Denial): string {
  const context = Object.entries(d.request.context)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(',')}]` : v}`)
    .join(' ');
  return `${d.function} ${d.call}: ${d.request.action} on ${d.request.resource} ${d.result}${context ? ` (${context})` : ''}`;
}

export class PolicySimulator {
  private readonly cache = new Map<string, Promise<string>>();

  constructor(
    private readonly role: FunctionRole,
    private readonly principal: string,
    private readonly accountId: string,
  ) {}

  /** 'Allowed', 'ImplicitlyDenied' or 'ExplicitlyDenied'; a request the simulator rejects throws. */
  evaluate(request: AuthorizationRequest): Promise<string> {
    const key = JSON.stringify(request);
    let result = this.cache.get(key);
    if (!result) {
      result = this.run(request);
      this.cache.set(key, result);
    }
    return result;
  }

  /** Evaluates the requests of one call; the denials go to the ledger and are returned. */
  async check(call: string, requests: readonly AuthorizationRequest[]): Promise<Denial[]> {
    const denials: Denial[] = [];
    for (const request of requests) {
      const result = await this.evaluate(request);
      if (result !== 'Allowed') denials.push({ function: this.role.function, call, request, result });
    }
    ledger.push(...denials);
    return denials;
  }

  /** Records a denial found outside the simulation (e.g. a call the harness cannot model). */
  record(call: string, denial: Pick<Denial, 'request' | 'result'>): Denial[] {
    const recorded = { function: this.role.function, call, ...denial };
    ledger.push(recorded);
    return [recorded];
  }

  private async run(request: AuthorizationRequest): Promise<string> {
    const simulation: Simulation = {
      identityPolicies: this.role.policies.map((p) => ({ name: p.name, policy: p.document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      request: {
        principal: this.principal,
        action: request.action,
        // A RAM-shared subnet or security group keeps its owner in the ARN; the share is what lets
        // the caller's account use it, so only the identity policy decides (same-account evaluation).
        resource: { resource: request.resource, accountId: this.accountId },
        contextVariables: request.context,
      },
    };
    // AWS's public SSM parameters have ARNs without an account, which the simulator's ARN validation
    // refuses; their evaluation is the same, so it runs unvalidated.
    if (/^arn:aws:ssm:[^:]*::parameter\//.test(request.resource)) return runUnsafeSimulation(simulation, {});
    const response = await runSimulation(simulation, {});
    if (response.resultType === 'error') {
      throw new Error(
        `iam harness: the simulator rejected ${request.action} on ${request.resource}: ${JSON.stringify(response.errors)}`,
      );
    }
    return response.overallResult;
  }
}
