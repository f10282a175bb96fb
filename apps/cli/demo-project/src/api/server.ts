import { createServer } from 'node:http';
import { routes } from './routes.js';

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const route = routes.find((candidate) => candidate.method === request.method && candidate.path.test(url.pathname));
  if (!route) {
    response.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const params = route.path.exec(url.pathname)!.slice(1);
  const result = await route.handle(params, body);
  response.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.body));
});

server.listen(Number(process.env.PORT ?? 3000));
