// The CloudFormation custom-resource protocol, as the stack's uninstall resource speaks it: the event
// CloudFormation invokes the function with, and the response it waits for at the event's pre-signed
// ResponseURL. CloudFormation waits up to an hour for that response, so a run that fails must still
// send one.

export interface CustomResourceEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  ResourceType: string;
  PhysicalResourceId?: string;
  ResourceProperties?: Record<string, unknown>;
}

export interface CustomResourceResponse {
  Status: 'SUCCESS' | 'FAILED';
  Reason: string;
  PhysicalResourceId: string;
  Data?: Record<string, string>;
}

export function isCustomResourceEvent(event: unknown): event is CustomResourceEvent {
  if (typeof event !== 'object' || event === null) return false;
  const e = event as Record<string, unknown>;
  return (
    (e.RequestType === 'Create' || e.RequestType === 'Update' || e.RequestType === 'Delete') &&
    typeof e.ResponseURL === 'string' &&
    typeof e.StackId === 'string' &&
    typeof e.RequestId === 'string' &&
    typeof e.LogicalResourceId === 'string'
  );
}

// A response body past 4 KB is refused by CloudFormation; the reason is the part that can grow.
const MAX_REASON = 2_000;

export type SendResponse = (url: string, body: string) => Promise<void>;

/** PUT to the pre-signed S3 URL: no content type, or the signature does not match. */
export const putResponse: SendResponse = async (url, body) => {
  const out = await fetch(url, { method: 'PUT', body, headers: { 'content-type': '' } });
  if (!out.ok) throw new Error(`CloudFormation response to ${new URL(url).host} failed: HTTP ${out.status}`);
};

export async function respond(
  event: CustomResourceEvent,
  response: CustomResourceResponse,
  send: SendResponse = putResponse,
): Promise<void> {
  const reason = response.Reason.length > MAX_REASON ? `${response.Reason.slice(0, MAX_REASON - 1)}…` : response.Reason;
  await send(
    event.ResponseURL,
    JSON.stringify({
      ...response,
      Reason: reason,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    }),
  );
}
