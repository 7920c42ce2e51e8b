import type { Context } from 'koa';
import type { CommandContext } from '../../commands/handler.ts';
import { requireAgent } from '../auth.ts';
import type { Services } from '../services.ts';

/** The command context of a request: command id from the Idempotency-Key, time from the clock. */
export function commandContext(s: Services, ctx: Context, actor: string | null): CommandContext {
  return {
    commandId: commandIdOf(ctx),
    actor,
    requestId: ctx.state.requestId,
    now: s.clock.now(),
    fresh: ctx.state.freshCommand === true,
    meter: ctx.state.creditMeter,
  };
}

/** The request's command id, set by the idempotency middleware (api/idempotency.ts) before every route. */
export function commandIdOf(ctx: Context): string {
  const commandId = ctx.state.commandId;
  if (commandId === undefined) throw new Error('no command id: the idempotency middleware runs before every route');
  return commandId;
}

/** K|J writer: the agent that writes (its operation's rate limit is counted by `mount`, api/operations.ts). */
export function writer(_s: Services, ctx: Context): string {
  return requireAgent(ctx);
}

/**
 * Read-your-writes: answer only once the read models include the write. The wait is bounded: the
 * write is already durable in the log, so past the bound the request still succeeds (a failed
 * answer would make the client retry a write that happened) and the lag is logged.
 */
export async function settled(s: Services, position: number): Promise<void> {
  try {
    await s.runner.waitFor(position, 5_000);
  } catch (err) {
    s.logger.warn({ err, position, projected: s.runner.position }, 'read models lag behind an acknowledged write');
  }
}
