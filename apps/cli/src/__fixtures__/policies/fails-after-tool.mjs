// The main agent lists the files (a Glob call); every later request gets an `error` event
// of type api_error in the middle of its stream, so the run fails after its retries.
export default function policy(request) {
  if (request.toolResults.length === 0 && !request.lastUserText.includes('go on')) {
    return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
  }
  if (request.lastUserText.includes('go on')) return 'picked up where it stopped';
  return {
    fault: {
      kind: 'stream_error',
      afterEvents: 2,
      errorType: 'api_error',
      message: 'Internal server error',
    },
  };
}
