// AWS adapters, one per concern, each behind a narrow port (see ports.ts).

export * from './ami';
export * from './aws-errors';
export * from './clock';
export * from './cluster';
export * from './instance';
export * from './instanceprofile';
export * from './instancetype';
export * from './launchtemplate';
export * from './ports';
export * from './securitygroup';
export * from './subnet';
export * from './unavailableofferings';
