import type { EventOfType } from '../../events/catalogue.ts';
import { userStream } from '../../events/humans.ts';
import { notFound } from '../../events/kernel/errors.ts';
import type { Industry, MemberProfileUpdated } from '../../events/social.ts';
import { memberStream } from '../../events/social.ts';
import { userAggregate } from '../humans/user.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export type MemberStreamEvent = EventOfType<'MemberProfileUpdated'>;

export interface MemberProfile {
  full_name: string;
  headline: string | null;
  bio: string | null;
  industry: Industry | null;
  region: string | null;
  gives: string[];
  asks: string[];
  discoverable: boolean;
}

/** `member-<user_id>`: the profile as last set (null before the first change). */
export interface MemberState {
  profile: MemberProfile | null;
}

export const memberAggregate: Aggregate<MemberState, MemberStreamEvent> = {
  initialState: () => ({ profile: null }),
  evolve(_state, event) {
    switch (event.type) {
      case 'MemberProfileUpdated': {
        const { user_id: _u, updated_at: _at, ...profile } = event.data;
        return { profile };
      }
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
};

export type UpdateMemberProfile = Command<
  'UpdateMemberProfile',
  {
    user_id: string;
    /** From the user's stream: whether the user exists and the name they registered with. */
    user_exists: boolean;
    registered_name: string;
    /** The fields to change (validated and normalised by the route). */
    changes: Partial<MemberProfile>;
  }
>;

/** The whole profile after the change; nothing when nothing changes; an unknown user 404. */
export function decideUpdateMemberProfile(command: UpdateMemberProfile, state: MemberState): MemberProfileUpdated[] {
  const { user_id, user_exists, registered_name, changes } = command.data;
  if (!user_exists) throw notFound('User', 'user_not_found');
  const before: MemberProfile = state.profile ?? {
    full_name: registered_name,
    headline: null,
    bio: null,
    industry: null,
    region: null,
    gives: [],
    asks: [],
    discoverable: true,
  };
  const after: MemberProfile = { ...before, ...changes };
  if (JSON.stringify(after) === JSON.stringify(before) && state.profile) return [];
  return [{ type: 'MemberProfileUpdated', data: { user_id, ...after, updated_at: command.metadata.now.toISOString() } }];
}

export async function updateMemberProfile(bus: CommandBus, userId: string, changes: Partial<MemberProfile>, ctx: CommandContext) {
  const user = await bus.load(userStream(userId), userAggregate);
  const command: UpdateMemberProfile = {
    type: 'UpdateMemberProfile',
    data: { user_id: userId, user_exists: user.state.exists, registered_name: user.state.full_name, changes },
    metadata: { now: ctx.now },
  };
  return bus.handle<MemberState, MemberStreamEvent, MemberProfileUpdated[]>(
    memberStream(userId),
    memberAggregate,
    (s) => decideUpdateMemberProfile(command, s),
    ctx,
  );
}
