import { DelegateError } from '@delegate/core';
import type { Pacing } from './start-sim.js';

/** Options the `delegate-sim` command understands. */
export type BinArguments = {
  /** Port to listen on (0 = any free port). */
  port: number;
  /** Host to bind. */
  host: string;
  /** Path of a module whose default export is the policy, if given. */
  policyPath: string | undefined;
  /** Artificial latency. */
  pacing: Pacing;
  /** Seed of ids and fault draws. */
  seed: string | undefined;
  /** True when `--help` was asked for. */
  help: boolean;
};

/** Usage text of the `delegate-sim` command. */
export const BIN_USAGE = `Usage: delegate-sim [--port N] [--host H] [--policy ./policy.mjs] [--pacing TTFT_MS,MS_PER_TOKEN] [--seed S]

Starts a local Messages API simulator and prints its URL.
  --port     port to listen on (default 0: any free port)
  --host     host to bind (default 127.0.0.1)
  --policy   module whose default export is the policy (default: echo the last user text)
  --pacing   latency: time to first token and time per token in ms, e.g. 200,5 (default 0,0)
  --seed     seed of ids, signatures and fault draws (default 0)
`;

function fail(message: string): never {
  throw new DelegateError('INVALID_ARGUMENT', `delegate-sim: ${message}\n\n${BIN_USAGE}`);
}

function readNumber(flag: string, value: string | undefined): number {
  const number = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(number) || number < 0) {
    fail(`${flag} needs a non-negative number, got ${JSON.stringify(value ?? '')}`);
  }
  return number;
}

/** Parses the command line of `delegate-sim` (flags as `--name value` or `--name=value`). */
export function parseBinArguments(argv: readonly string[]): BinArguments {
  const result: BinArguments = {
    port: 0,
    host: '127.0.0.1',
    policyPath: undefined,
    pacing: {},
    seed: undefined,
    help: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? '';
    const equals = argument.indexOf('=');
    const flag = equals >= 0 ? argument.slice(0, equals) : argument;
    const takeValue = (): string | undefined =>
      equals >= 0 ? argument.slice(equals + 1) : argv[++index];
    switch (flag) {
      case '--help':
      case '-h':
        result.help = true;
        break;
      case '--port': {
        const port = readNumber('--port', takeValue());
        if (!Number.isInteger(port) || port > 65535)
          fail(`--port must be an integer from 0 to 65535`);
        result.port = port;
        break;
      }
      case '--host': {
        const host = takeValue();
        if (!host) fail('--host needs a value');
        result.host = host;
        break;
      }
      case '--policy': {
        const path = takeValue();
        if (!path) fail('--policy needs a module path');
        result.policyPath = path;
        break;
      }
      case '--pacing': {
        const value = takeValue() ?? '';
        const [first, perToken] = value.split(',');
        result.pacing = {
          timeToFirstTokenMs: readNumber('--pacing', first),
          msPerToken: perToken === undefined ? 0 : readNumber('--pacing', perToken),
        };
        break;
      }
      case '--seed': {
        const seed = takeValue();
        if (seed === undefined) fail('--seed needs a value');
        result.seed = seed;
        break;
      }
      default:
        fail(`unknown argument ${JSON.stringify(argument)}`);
    }
  }
  return result;
}
