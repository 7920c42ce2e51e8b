import { Eta } from 'eta';
import type { Context } from 'koa';
import { fileURLToPath } from 'node:url';

/** Server-rendered console pages: Eta templates in api/console/views, every `<%= %>` HTML-escaped. */
const eta = new Eta({ views: fileURLToPath(new URL('./views', import.meta.url)), autoEscape: true, cache: true });

/** Renders a view into the page layout and answers it as HTML that no other site may frame. */
export function renderPage(ctx: Context, view: string, data: Record<string, unknown>, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = eta.render(view, data);
}

/** A 30-day bar chart as inline SVG (no script): one bar per day, scaled to the largest. */
export function spendChart(days: Array<{ date: string; amount: number }>, width = 600, height = 120) {
  const max = Math.max(...days.map((d) => d.amount), 0);
  const slot = width / Math.max(days.length, 1);
  return {
    width,
    height,
    max,
    bars: days.map((d, i) => {
      const h = max > 0 ? Math.round((d.amount / max) * (height - 20)) : 0;
      return { x: Math.round(i * slot + 1), y: height - 14 - h, w: Math.max(1, Math.round(slot - 2)), h, date: d.date, amount: d.amount };
    }),
  };
}
