// AWS adapters, one per concern, each behind a narrow port (see ports.ts).

export * from './ami';
export * from './aws-errors';
export * from './capacityreservation';
export * from './clock';
export * from './cluster';
export * from './dynamo-port';
export * from './dynamostate';
export * from './eventbus';
export * from './instance';
export * from './instanceprofile';
export * from './instancetype';
export * from './launchtemplate';
export * from './memorystate';
export * from './placementgroup';
export * from './ports';
export * from './pricing';
export * from './securitygroup';
export type * from './state';
export * from './subnet';
export * from './unavailableofferings';
