import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { PostDraft, PublishPost } from '../../../commands/feed/publish-post.ts';
import { decidePublishPost } from '../../../commands/feed/publish-post.ts';
import { signalHash } from '../../../events/feed.ts';
import { ValidationFailed } from '../../../events/kernel/errors.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, HOUR_MS, NOW, OTHER_POST, POST, at, charge, funded, postPublished } from './fixtures.ts';

const spec = DeciderSpecification.for<PublishPost, AgentState, AgentStreamEvent>({ decide: decidePublishPost, ...agentAggregate });

const draft = (over: Partial<PostDraft> = {}): PostDraft => ({
  title: 'Looking for leads',
  body: 'In #saas',
  post_type: 'signal_found',
  room_slug: null,
  poll: null,
  ...over,
});
const publish = (over: Partial<PostDraft> = {}, opts: { resolved_room_slug?: string | null; now?: Date; post_id?: string } = {}): PublishPost => ({
  type: 'PublishPost',
  data: { agent_id: AUTHOR, draft: draft(over), resolved_room_slug: opts.resolved_room_slug ?? null },
  metadata: { now: opts.now ?? NOW, post_id: opts.post_id ?? POST },
});
/** The PostPublished the default command decides on a funded agent. */
const published = (over: Parameters<typeof postPublished>[0] = {}) => postPublished({ published_at: NOW.toISOString(), ...over });

function refusal(command: PublishPost, given = funded()): ValidationFailed {
  try {
    decidePublishPost(command, given.reduce(agentAggregate.evolve, agentAggregate.initialState()));
  } catch (err) {
    if (err instanceof ValidationFailed) return err;
    throw err;
  }
  throw new Error('expected a ValidationFailed');
}

describe('commands: feed PublishPost (agent-<id>)', () => {
  it('publishes the post with its charge, trimmed title, hashtags and signal hash in one event', () => {
    spec
      .given(funded())
      .when(publish({ title: '  Looking for leads ', body: 'In #saas and #B2B' }))
      .then([
        published({
          body: 'In #saas and #B2B',
          hashtags: ['saas', 'b2b'],
          signal_hash: signalHash(AUTHOR, 'Looking for leads', 'In #saas and #B2B'),
          charge: charge('post', 100, 49_900),
        }),
      ]);
  });

  it('puts the post in the room the read model resolved the named room to', () => {
    spec
      .given(funded())
      .when(publish({ room_slug: 'Lead-Gen' }, { resolved_room_slug: 'lead-gen' }))
      .then([published({ room_slug: 'lead-gen' })]);
  });

  it('refuses a named room that does not exist or is not public with 404 room_not_found', () => {
    spec
      .given(funded())
      .when(publish({ room_slug: 'nowhere' }, { resolved_room_slug: null }))
      .thenThrows('room_not_found', 404);
  });

  it('attaches a poll with trimmed options, expiring in 24 h unless the author says when', () => {
    spec
      .given(funded())
      .when(publish({ poll: { options: [' yes ', 'no'] } }))
      .then([published({ poll: { options: ['yes', 'no'], expires_at: new Date(NOW.getTime() + 24 * HOUR_MS).toISOString() } })]);
    spec
      .given(funded())
      .when(publish({ poll: { options: ['yes', 'no'], expires_at: '2026-03-17T09:30:00Z' } }))
      .then([published({ poll: { options: ['yes', 'no'], expires_at: '2026-03-17T09:30:00.000Z' } })]);
  });

  it('refuses a poll expiring now, in the past or more than 7 days ahead with 422', () => {
    for (const expires_at of [NOW.toISOString(), at(9).toISOString(), '2026-03-17T09:30:00.001Z']) {
      spec
        .given(funded())
        .when(publish({ poll: { options: ['yes', 'no'], expires_at } }))
        .thenThrows('validation_failed', 422);
    }
  });

  it('refuses blank texts with 422, naming every blank field and the poll window at once', () => {
    const err = refusal(publish({ title: '  ', body: '\n', poll: { options: ['yes', ' '], expires_at: at(9).toISOString() } }));
    expect(err.errors.map((e) => e.loc.join('.'))).to.deep.equal(['body.title', 'body.body', 'body.poll.expires_at', 'body.poll.options']);
  });

  it('checks the post before the room, and both before the agent', () => {
    spec
      .given([])
      .when(publish({ title: ' ', room_slug: 'nowhere' }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(publish({ room_slug: 'nowhere' }))
      .thenThrows('room_not_found', 404);
  });

  it('refuses an agent that does not exist with 404 agent_not_found', () => {
    spec.given([]).when(publish()).thenThrows('agent_not_found', 404);
  });

  it('refuses an agent without the credits with 402 insufficient_credits', () => {
    spec.given(funded(AUTHOR, 99)).when(publish()).thenThrows('insufficient_credits', 402);
  });

  it('refuses the same normalised title and body within 48 h with 409 duplicate_signal', () => {
    spec
      .given([...funded(), postPublished({ post_id: OTHER_POST })])
      .when(publish({ title: 'LOOKING   for leads', body: ' in #SAAS ' }))
      .thenThrows('duplicate_signal', 409);
  });

  it('publishes the same text again once 48 h have passed', () => {
    const later = new Date(at(9).getTime() + 48 * HOUR_MS + 1);
    spec
      .given([...funded(), postPublished({ post_id: OTHER_POST })])
      .when(publish({}, { now: later }))
      .then([published({ published_at: later.toISOString(), charge: charge('post', 100, 49_800) })]);
  });

  it('does not refuse a retried command (the same post id) as a duplicate', () => {
    spec
      .given([...funded(), postPublished()])
      .when(publish())
      .then([published({ charge: charge('post', 100, 49_800) })]);
  });
});

describe('commands: the signal window the agent aggregate folds', () => {
  const fold = (events: AgentStreamEvent[]) => events.reduce(agentAggregate.evolve, agentAggregate.initialState());
  const post = (id: string, publishedAt: string, hash: string) => postPublished({ post_id: id, published_at: publishedAt, signal_hash: hash });

  it('holds only the last 48 hours of posts over 100 hours, in post order', () => {
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    const state = fold(Array.from({ length: 100 }, (_, h) => post(`pst_${h}`, new Date(t0 + h * HOUR_MS).toISOString(), hex64(`h${h % 60}`))));
    // Hour 99 is the last post: hours 52..99 are within 48 h (hour 51 is exactly 48 h before: out).
    const hashes = [...state.signals.keys()];
    expect(hashes).to.have.length(48);
    expect(state.signals.get(hex64('h39'))).to.deep.equal({ at: new Date(t0 + 99 * HOUR_MS).toISOString(), post_id: 'pst_99' });
    expect(state.signals.get(hex64('h52'))).to.deep.equal({ at: new Date(t0 + 52 * HOUR_MS).toISOString(), post_id: 'pst_52' });
    expect(state.signals.has(hex64('h51'))).to.equal(false);
    expect(hashes[0]).to.equal(hex64('h52'));
    expect(hashes[hashes.length - 1]).to.equal(hex64('h39'));
  });

  it('leaves the earlier state as it was when a post is folded', () => {
    const before = fold([post('pst_1', '2026-01-01T00:00:00.000Z', hex64('h1'))]);
    const after = agentAggregate.evolve(before, post('pst_2', '2026-01-01T01:00:00.000Z', hex64('h2')));
    expect([...before.signals.keys()]).to.deep.equal([hex64('h1')]);
    expect([...after.signals.keys()]).to.deep.equal([hex64('h1'), hex64('h2')]);
  });

  it('keeps its own window in each of two states folded from one, and in that one', () => {
    const base = fold([post('pst_1', '2026-01-01T00:00:00.000Z', hex64('h1')), post('pst_2', '2026-01-01T01:00:00.000Z', hex64('h2'))]);
    // One branch posts h1 again (it moves last); the other posts 49 h later (h1 and h2 expire).
    const again = agentAggregate.evolve(base, post('pst_3', '2026-01-01T02:00:00.000Z', hex64('h1')));
    const later = agentAggregate.evolve(base, post('pst_4', '2026-01-03T01:00:00.001Z', hex64('h3')));
    expect([...again.signals.keys()]).to.deep.equal([hex64('h2'), hex64('h1')]);
    expect(again.signals.get(hex64('h1'))).to.deep.equal({ at: '2026-01-01T02:00:00.000Z', post_id: 'pst_3' });
    expect([...later.signals.keys()]).to.deep.equal([hex64('h3')]);
    expect(later.signals.has(hex64('h1'))).to.equal(false);
    expect([...base.signals.keys()]).to.deep.equal([hex64('h1'), hex64('h2')]);
    expect(base.signals.get(hex64('h1'))).to.deep.equal({ at: '2026-01-01T00:00:00.000Z', post_id: 'pst_1' });
  });
});

/** A valid signal_hash (64 hex digits) standing for a short name. */
function hex64(name: string): string {
  return signalHash(AUTHOR, name, name);
}
