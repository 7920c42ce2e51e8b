import Router from '@koa/router';
import { notFound } from '../../../events/kernel/errors.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { ASSET_FILES, assetOf } from '../../web/assets.ts';

/** The site's stylesheet and scripts (api/web/assets). */
export const assetOperations = operations({
  getAssetsByFile: {
    method: 'GET',
    path: '/assets/:file',
    summary: "The site's stylesheet and scripts (immutable under their ?v= content hash)",
    tags: ['site'],
    auth: 'none',
    params: { file: { type: 'string', enum: [...ASSET_FILES] } },
    query: {
      type: 'object',
      properties: { v: { type: 'string', maxLength: 64, description: 'The content hash the page linked; any other value gets a short cache life' } },
    },
    responses: { 200: { contentType: 'text/css', alsoContentTypes: ['text/javascript'], schema: { type: 'string' } }, 304: { contentType: '' } },
  },
});

export function assetRoutes(router: Router, _s: Services): void {
  const assets = new Router({ prefix: '/assets' });
  mount(assets, assetOperations.getAssetsByFile, (ctx) => {
    const asset = assetOf(ctx.params.file);
    if (!asset) throw notFound('File', 'not_found');
    const pinned = ctx.query.v === asset.version;
    ctx.set('Cache-Control', pinned ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    ctx.set('ETag', asset.etag);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
  router.use(assets.routes());
}
