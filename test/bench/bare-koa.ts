// The ceiling for the HTTP benchmarks: a bare Koa + koa-body POST handler, nothing else. With
// BARE_BODY_FILE, a GET answers that file's bytes as JSON from memory (the read benchmarks' ceiling).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Koa from 'koa';
import { koaBody } from 'koa-body';

const served = process.env.BARE_BODY_FILE ? readFileSync(process.env.BARE_BODY_FILE) : null;
const app = new Koa();
app.use(koaBody({ jsonLimit: '64kb' }));
app.use(async (ctx) => {
  if (ctx.method === 'POST') {
    const body = ctx.request.body as Record<string, unknown>;
    ctx.body = { ok: true, title: body.title ?? null };
  } else if (served) {
    ctx.type = 'application/json';
    ctx.body = served;
  } else ctx.body = { ok: true };
});
const server = createServer(app.callback());
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
