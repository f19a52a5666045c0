// Tests that reach a host outside this machine (the npm registry) run only when it answers: the
// global setup probes it once (`npm ping`) and notes the result in TEST_NPM_REGISTRY. Elsewhere
// they are skipped, named as such, instead of failing on a machine without that network.
export const NPM_REGISTRY_REACHABLE = process.env.TEST_NPM_REGISTRY === 'reachable';

/** `describe` for tests that need the npm registry; skipped (and says so) when it cannot be reached. */
export const describeWithNpmRegistry: jest.Describe = NPM_REGISTRY_REACHABLE ? describe : describe.skip;
