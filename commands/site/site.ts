import type { NdaAccepted, PageViewed, PartnerLeadSubmitted, PitchDeckUpdated, SiteEvent } from '../../events/site.ts';
import { ndaStream, pageViewStream, partnerLeadStream, PITCH_DECK_STREAM } from '../../events/site.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** Public-site streams hold facts only; nothing is decided on their history. */
export const siteAggregate: Aggregate<{ events: number }, SiteEvent> = {
  initialState: () => ({ events: 0 }),
  evolve: (state) => ({ events: state.events + 1 }),
};

export type SubmitPartnerLead = Command<'SubmitPartnerLead', Omit<PartnerLeadSubmitted['data'], 'lead_id' | 'submitted_at'>, { now: Date; lead_id: string }>;
export function decideSubmitPartnerLead(command: SubmitPartnerLead, state: { events: number }): PartnerLeadSubmitted[] {
  if (state.events > 0) return [];
  return [{ type: 'PartnerLeadSubmitted', data: { lead_id: command.metadata.lead_id, ...command.data, submitted_at: command.metadata.now.toISOString() } }];
}
export type RecordPageView = Command<'RecordPageView', Omit<PageViewed['data'], 'viewed_at'>>;
export function decideRecordPageView(command: RecordPageView): PageViewed[] {
  return [{ type: 'PageViewed', data: { ...command.data, viewed_at: command.metadata.now.toISOString() } }];
}
export type UpdatePitchDeck = Command<'UpdatePitchDeck', { url: string; updated_by: string }>;
export function decideUpdatePitchDeck(command: UpdatePitchDeck): PitchDeckUpdated[] {
  return [{ type: 'PitchDeckUpdated', data: { ...command.data, updated_at: command.metadata.now.toISOString() } }];
}
export type AcceptNda = Command<'AcceptNda', Omit<NdaAccepted['data'], 'acceptance_id' | 'accepted_at'>, { now: Date; acceptance_id: string }>;
export function decideAcceptNda(command: AcceptNda, state: { events: number }): NdaAccepted[] {
  if (state.events > 0) return [];
  return [{ type: 'NdaAccepted', data: { acceptance_id: command.metadata.acceptance_id, ...command.data, accepted_at: command.metadata.now.toISOString() } }];
}

const handle = <R extends SiteEvent[]>(bus: CommandBus, stream: string, decide: (s: { events: number }) => R, ctx: CommandContext) =>
  bus.handle<{ events: number }, SiteEvent, R>(stream, siteAggregate, decide, ctx);

export async function submitPartnerLead(bus: CommandBus, data: SubmitPartnerLead['data'], ctx: CommandContext) {
  const lead_id = deriveId('lead', ctx.commandId);
  const r = await handle(
    bus,
    partnerLeadStream(lead_id),
    (s) => decideSubmitPartnerLead({ type: 'SubmitPartnerLead', data, metadata: { now: ctx.now, lead_id } }, s),
    ctx,
  );
  return { ...r, lead_id };
}
export const recordPageView = (bus: CommandBus, data: RecordPageView['data'], ctx: CommandContext) =>
  handle(
    bus,
    pageViewStream(ctx.now.toISOString().slice(0, 10)),
    () => decideRecordPageView({ type: 'RecordPageView', data, metadata: { now: ctx.now } }),
    ctx,
  );
export const updatePitchDeck = (bus: CommandBus, data: UpdatePitchDeck['data'], ctx: CommandContext) =>
  handle(bus, PITCH_DECK_STREAM, () => decideUpdatePitchDeck({ type: 'UpdatePitchDeck', data, metadata: { now: ctx.now } }), ctx);
export async function acceptNda(bus: CommandBus, data: AcceptNda['data'], ctx: CommandContext) {
  const acceptance_id = deriveId('nda', ctx.commandId);
  const r = await handle(bus, ndaStream(acceptance_id), (s) => decideAcceptNda({ type: 'AcceptNda', data, metadata: { now: ctx.now, acceptance_id } }, s), ctx);
  return { ...r, acceptance_id };
}
