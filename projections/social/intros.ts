import { defineProjection, type DataOf } from '../types.ts';

/** An introduction request; `_id` is its intro id. */
export type IntroDoc = Omit<DataOf<'IntroRequested'>, 'charge'> & {
  _id: string;
  _pos: number;
  status: 'pending' | 'approved' | 'declined';
  match_id: string | null;
  decided_at: string | null;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    intros: IntroDoc;
  }
}

/** Introductions: one document per request, read by the member (pending, newest first) and by the requesting agent. */
export const introsProjection = defineProjection({
  name: 'intros',
  collections: [
    {
      name: 'intros',
      indexes: [
        { name: 'by_member_status', keys: { member_id: 1, status: 1, seq: -1 } },
        { name: 'by_agent_member', keys: { agent_id: 1, member_id: 1, status: 1 } },
      ],
    },
  ],
  handles: ['IntroRequested', 'IntroApproved', 'IntroDeclined'],
  async apply(event, ctx) {
    const intros = ctx.collection('intros');
    switch (event.type) {
      case 'IntroRequested': {
        const { charge: _c, ...d } = event.data;
        await intros.applyAt(d.intro_id, event.position, {
          $set: Object.assign({}, d, { status: 'pending' as const, match_id: null, decided_at: null, seq: event.position }),
        });
        return;
      }
      case 'IntroApproved': {
        const d = event.data;
        await intros.applyAt(d.intro_id, event.position, { $set: { status: 'approved', match_id: d.match_id, decided_at: d.approved_at } });
        return;
      }
      case 'IntroDeclined': {
        const d = event.data;
        await intros.applyAt(d.intro_id, event.position, { $set: { status: 'declined', decided_at: d.declined_at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
