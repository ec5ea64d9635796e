// Issue #67: allowlistedEnvironment's comment said secret-looking variables never pass "even
// when listed", while a listed MY_API_KEY or DB_PASSWORD passed (as the READMEs say: a server
// may need a database password). The code keeps passing them — what a user needs — and says so
// loudly: a warning in the run's log and in the shard's warnings (the report, the comment); a
// listed token, input or runner variable is still never passed, and now said to be left out.
import { describe, expect, it } from 'vitest';
import { allowlistedEnvironment, passEnvWarnings, untrustedEnvironment } from '../src/measure/environment.js';

const ENV: NodeJS.ProcessEnv = {
  PATH: '/usr/bin',
  MY_API_KEY: 'k',
  DB_PASSWORD: 'p',
  OTHER_SECRET: 's',
  GITHUB_TOKEN: 'ghs_x',
  'INPUT_GITHUB-TOKEN': 'ghs_y',
  ACTIONS_RUNTIME_TOKEN: 'r',
  NPM_TOKEN: 'n',
  PLAIN: 'v',
};
const LISTED = [
  'MY_API_KEY',
  'DB_PASSWORD',
  'GITHUB_TOKEN',
  'INPUT_GITHUB-TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'PLAIN',
];

describe('passEnv and secret-looking names', () => {
  it.each([
    ['allowlistedEnvironment', allowlistedEnvironment],
    ['untrustedEnvironment', untrustedEnvironment],
  ])('%s passes a listed secret-looking name, never a token, an input or ACTIONS_*', (_, environment) => {
    const env = environment(ENV, LISTED);
    expect(env.MY_API_KEY).toBe('k');
    expect(env.DB_PASSWORD).toBe('p');
    expect(env.PLAIN).toBe('v');
    for (const name of [
      'OTHER_SECRET',
      'GITHUB_TOKEN',
      'INPUT_GITHUB-TOKEN',
      'ACTIONS_RUNTIME_TOKEN',
      'NPM_TOKEN',
    ])
      expect(env[name], name).toBeUndefined();
  });

  it("keeps a runner's CA bundles, which npm needs behind a TLS-inspecting proxy", () => {
    const env = allowlistedEnvironment({
      PATH: '/usr/bin',
      NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
      SSL_CERT_FILE: '/etc/ssl/cert.pem',
      SSL_CERT_DIR: '/etc/ssl/certs',
      HTTPS_PROXY: 'http://user:pass@proxy:3128',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
      SSL_CERT_FILE: '/etc/ssl/cert.pem',
      SSL_CERT_DIR: '/etc/ssl/certs',
    });
  });

  it('warns about each listed secret-looking name that is passed, and each listed name never passed', () => {
    const warnings = passEnvWarnings(LISTED, ENV);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toBe(
      'passEnv lists "GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN", never passed to install, build, setup or the server (a token, an input or a runner variable): left out',
    );
    expect(warnings[1]).toContain('passEnv passes "MY_API_KEY", "DB_PASSWORD" (secret-looking names)');
    expect(warnings[1]).toContain("the pull request's code can read them");
    expect(warnings[1]).not.toContain('PLAIN');
  });

  it('says nothing for plain names, or for a listed secret that is not set', () => {
    expect(passEnvWarnings(['PLAIN', 'DATABASE_URL'], ENV)).toEqual([]);
    expect(passEnvWarnings(['UNSET_PASSWORD'], ENV)).toEqual([]);
  });

  it('names a hostile listed name as a JSON string, and at most 20 of them', () => {
    const many = Array.from({ length: 25 }, (_, i) => `X${i}_TOKEN_\u001b]0;t\u0007`);
    const env = Object.fromEntries(many.map((n) => [n, '1']));
    const [warning] = passEnvWarnings(many, env);
    expect(warning).toContain('"X0_TOKEN_\\u001b]0;t\\u0007"');
    expect(warning).toContain('and 5 more');
    expect(warning).not.toContain('\u001b');
  });
});
