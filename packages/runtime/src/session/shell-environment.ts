/** Environment variables that hold Anthropic credentials; shells and hooks never get them. */
export const CREDENTIAL_VARIABLES: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
];

/**
 * A copy of `env` without the credential variables, for the processes agents start (Bash
 * commands, hook commands): a model that runs `env`, or a hook from a cloned repository's
 * agent file, must not be able to read the API key into a transcript or send it away.
 */
export function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...env };
  for (const name of CREDENTIAL_VARIABLES) delete copy[name];
  return copy;
}
