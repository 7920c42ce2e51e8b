// The ceiling for the HTTP benchmarks: a bare Koa + koa-body POST handler, nothing else. With
// BARE_BODY_FILE, a GET answers that file's bytes from memory (the read benchmarks' ceiling), as
// JSON or as BARE_BODY_TYPE.
import { readFileSync } from 'node:fs';
import { serveBare } from './bare-server.ts';

const served = process.env.BARE_BODY_FILE ? readFileSync(process.env.BARE_BODY_FILE) : null;
serveBare(
  (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    ctx.body = { ok: true, title: body.title ?? null };
  },
  (ctx) => {
    if (served) {
      ctx.type = process.env.BARE_BODY_TYPE ?? 'application/json';
      ctx.body = served;
    } else ctx.body = { ok: true };
  },
);
