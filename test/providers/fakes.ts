// Hand-written recording fakes for the provider ports: every call is recorded with its input, and
// answered by the handler the test gives; a call without a handler fails the test loudly.

export interface Call {
  method: string;
  input: unknown;
}

type Handlers<T> = {
  [K in keyof T]?: T[K] extends (input: infer I) => Promise<infer O>
    ? (input: I) => Omit<O, '$metadata'> | Promise<Omit<O, '$metadata'>>
    : never;
};

export type Recording<T> = T & { calls: Call[]; callsTo(method: keyof T & string): unknown[] };

export function recordingFake<T extends object>(handlers: Handlers<T>): Recording<T> {
  const calls: Call[] = [];
  const fake = {
    calls,
    callsTo: (method: string) => calls.filter((c) => c.method === method).map((c) => c.input),
  } as Record<string, unknown>;
  return new Proxy(fake, {
    get(target, property) {
      if (typeof property !== 'string' || property in target) return target[property as string];
      return async (input: unknown) => {
        calls.push({ method: property, input });
        const handler = (handlers as Record<string, ((i: unknown) => unknown) | undefined>)[property];
        if (!handler) throw new Error(`unexpected call ${property}(${JSON.stringify(input)})`);
        return handler(input);
      };
    },
  }) as Recording<T>;
}

/** An SDK-shaped service error (the SDK sets name to the error code). */
export function awsError(code: string, message = code): Error {
  const error = new Error(message);
  error.name = code;
  return error;
}

/** A clock the test moves by hand. */
export function fakeClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let now = start;
  const clock = () => now;
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
  });
}
