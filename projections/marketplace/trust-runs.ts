import { defineProjection, type DataOf } from '../types.ts';

/** A finished trust run; `_id` is the run id. */
export type TrustRunDoc = DataOf<'TrustRecomputeCompleted'> & {
  _id: string;
  _pos: number;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    trust_runs: TrustRunDoc;
  }
}

/** Completed trust recomputations (nightly and on demand): the nightly job's "already ran tonight" check and the time shown with scores. */
export const trustRunsProjection = defineProjection({
  name: 'trust_runs',
  collections: [{ name: 'trust_runs', indexes: [{ name: 'by_night', keys: { night: -1 } }] }],
  handles: ['TrustRecomputeCompleted'],
  async apply(event, ctx) {
    switch (event.type) {
      case 'TrustRecomputeCompleted': {
        const d = event.data;
        await ctx.collection('trust_runs').applyAt(d.run_id, event.position, { $set: Object.assign({}, d, { seq: event.position }) });
        return;
      }
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
});
