// Placeholder until the moto harness lands: there are no integration tests yet.
export default function setup(): void {}
