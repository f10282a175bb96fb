import { secretRedactor } from '@delegate/runtime';
import { redactValue } from '@delegate/runtime/internal';

/**
 * What the CLI prints (answers, events, stream-json and json lines, background reports) with
 * the session's secrets replaced by `[REDACTED]`, as its transcripts have them. The model may
 * repeat a key it read in a file or a prompt; the output must not carry it on. A value with
 * no secret in it is returned as it is, not copied.
 */
export type OutputRedaction = <T>(value: T) => T;

/** The redaction of `secrets` (those shorter than the runtime's minimum are not secrets). */
export function outputRedaction(secrets: readonly (string | undefined)[]): OutputRedaction {
  const redact = secretRedactor(secrets);
  if (redact === undefined) return (value) => value;
  // A secret that JSON writes escaped would not be found in the serialised value.
  const escaped = secrets.some(
    (secret) => secret !== undefined && JSON.stringify(secret).length !== secret.length + 2,
  );
  return <T>(value: T): T => {
    if (typeof value === 'string') return redact(value) as T;
    // One pass over the serialised value finds most values clean; only the rest are copied.
    const text = escaped ? undefined : JSON.stringify(value);
    if (text !== undefined && redact(text) === text) return value;
    return redactValue(value, redact) as T;
  };
}
