// Admin operations on the running service's read models (super admin): each projection's
// checkpoint, head and lag, and a one-projection rebuild into shadow collections with its progress.
// The CLI (`projections rebuild --url`) and the admin console call these.
import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import { DomainError } from '../../../events/kernel/errors.ts';
import { projectionLags } from '../../../projections/operations.ts';
import type { Services } from '../../services.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { mount, operations } from '../../operations.ts';

const Checksum = Type.Object({ count: Type.Integer(), sha256: Type.String() });

/** GET /api/admin/projections/{name}/rebuild and the 202 of POST: a rebuild's status. */
export const RebuildStatusSchema = Type.Object({
  id: Type.String(),
  projection: Type.String(),
  state: Type.Union([Type.Literal('running'), Type.Literal('swapped'), Type.Literal('failed')]),
  started_at: Type.String({ format: 'date-time' }),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  position: Type.Integer(),
  target: Type.Integer(),
  events: Type.Integer(),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
  eta_seconds: Type.Union([Type.Number(), Type.Null()]),
  comparisons: Type.Array(Type.Object({ collection: Type.String(), rebuilt: Checksum, live: Checksum, equal: Type.Boolean() })),
  error: Type.Union([Type.String(), Type.Null()]),
});

/** GET /api/admin/projections. */
export const ProjectionListSchema = Type.Object({
  head: Type.Integer(),
  paused: Type.Boolean(),
  items: Type.Array(
    Type.Object({
      name: Type.String(),
      checkpoint: Type.Integer(),
      head: Type.Integer(),
      lag_events: Type.Integer(),
      lag_seconds: Type.Number(),
      handles: Type.Array(Type.String()),
      rebuild: Type.Union([RebuildStatusSchema, Type.Null()]),
    }),
  ),
});

/** Path parameter of the rebuild routes. */
export const ProjectionNameParams = Type.Object({ name: Type.String({ pattern: '^[a-z0-9_-]{1,64}$' }) });

export const adminProjectionOperations = operations({
  getAdminProjections: {
    method: 'GET',
    path: '/api/admin/projections',
    summary: "Super admin: each projection's checkpoint, head, lag and last rebuild",
    tags: ['admin'],
    auth: 'admin',
    responses: { 200: { schema: ProjectionListSchema } },
  },
  postAdminProjectionsByNameRebuild: {
    method: 'POST',
    path: '/api/admin/projections/:name/rebuild',
    summary: 'Super admin: rebuild one projection into shadow collections, then swap (202 with its status)',
    tags: ['admin'],
    auth: 'admin',
    params: { name: ProjectionNameParams.properties.name },
    responses: { 202: { description: 'Started (Location: the status URL)', schema: RebuildStatusSchema } },
  },
  getAdminProjectionsByNameRebuild: {
    method: 'GET',
    path: '/api/admin/projections/:name/rebuild',
    summary: "Super admin: a projection rebuild's progress",
    tags: ['admin'],
    auth: 'admin',
    params: { name: ProjectionNameParams.properties.name },
    responses: { 200: { schema: RebuildStatusSchema } },
  },
});

export function adminProjectionRoutes(router: Router, s: Services): void {
  const r = new Router({ prefix: '/api/admin/projections' });

  mount(r, adminProjectionOperations.getAdminProjections, async (ctx) => {
    requireSuperAdmin(ctx);
    const lags = await projectionLags(s.log, s.runner, s.clock.now());
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      head: lags[0]?.head ?? (await s.log.headPosition()),
      paused: s.runner.isPaused,
      items: lags.map((l) => ({ ...l, rebuild: s.rebuilds.status(l.name) })),
    };
  });

  const named = (name: string) => {
    if (!s.runner.projections.some((p) => p.name === name)) throw new DomainError(404, 'projection_not_found', `No projection named ${name}`);
    return name;
  };

  mount(r, adminProjectionOperations.postAdminProjectionsByNameRebuild, (ctx) => {
    requireSuperAdmin(ctx);
    const status = s.rebuilds.start(named(ctx.params.name));
    ctx.status = 202;
    ctx.set('Location', `/api/admin/projections/${status.projection}/rebuild`);
    ctx.body = status;
  });

  mount(r, adminProjectionOperations.getAdminProjectionsByNameRebuild, (ctx) => {
    requireSuperAdmin(ctx);
    const status = s.rebuilds.status(named(ctx.params.name));
    if (!status) throw new DomainError(404, 'not_found', `No rebuild of ${ctx.params.name} since the service started`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = status;
  });

  router.use(r.routes());
}
