export * from './placement';
export * from './readiness';
