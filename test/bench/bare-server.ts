// The shared frame of the benchmarks' bare servers (bare-koa.ts, bare-mcp.ts, bare-append.ts): Koa
// with koa-body and nothing else, `post` answering a POST and `get` any other request, listening on
// PORT at 127.0.0.1 and stopping on SIGTERM (after `stop`, when given).
import { createServer } from 'node:http';
import Koa from 'koa';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';

export function serveBare(
  post: (ctx: Context) => Promise<void> | void,
  get: (ctx: Context) => void = (ctx) => (ctx.body = { ok: true }),
  stop?: () => Promise<void>,
) {
  const app = new Koa();
  app.use(koaBody({ jsonLimit: '64kb' }));
  app.use(async (ctx) => {
    if (ctx.method === 'POST') await post(ctx);
    else get(ctx);
  });
  const server = createServer(app.callback());
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
  });
  process.on('SIGTERM', () => server.close(() => void (stop ?? (async () => undefined))().then(() => process.exit(0))));
}
