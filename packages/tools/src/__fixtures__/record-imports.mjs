// Registers a module hook that reports, on stderr, every package module a process loads.
import { register } from 'node:module';

const hooks = `
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (result.url.includes('/node_modules/')) process.stderr.write('LOADED ' + result.url + '\\n');
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
