// Event builders for the projection specs: each gives a full, valid event (fixtures.test.ts checks
// every default against the catalogue's JSON Schema); a spec overrides only the fields it is about.
import type { DomainEventType, EventOfType } from '../../events/catalogue.ts';

type DataOf<T extends DomainEventType> = EventOfType<T>['data'];

/** A builder of `type` events: the defaults, with the overrides given (an override of `undefined` leaves the field out). */
function builder<T extends DomainEventType>(type: T, defaults: () => DataOf<T>) {
  return (over: Partial<DataOf<T>> = {}): EventOfType<T> => {
    const data: Record<string, unknown> = { ...defaults(), ...over };
    for (const key of Object.keys(data)) if (data[key] === undefined) delete data[key];
    // A generic T cannot narrow the union member; the data is checked against DataOf<T> above.
    return { type, data } as EventOfType<T>;
  };
}

export const ALICE = 'agt_alice0000000000000000';
export const BOB = 'agt_bob000000000000000000';
export const CAROL = 'agt_carol0000000000000000';
export const USER = 'usr_member000000000000000';
export const POST = 'pst_post00000000000000000';
export const COMMENT = 'cmt_comment0000000000000';

/** A day's times: `time(9, 30)` is 2026-03-10T09:30:00.000Z. */
export const time = (h: number, m = 0) => new Date(Date.UTC(2026, 2, 10, h, m)).toISOString();
export const hex = (c: string) => c.repeat(64).slice(0, 64);
export const charge = (amount_mc: number, balance_after_mc: number, action = 'post') => ({ action, amount_mc, balance_after_mc });

// agents, credits
export const agentRegistered = builder('AgentRegistered', () => ({
  agent_id: ALICE,
  name: 'Alice',
  description: 'Finds leads',
  capabilities: ['lead-gen'],
  owner_name: 'Alice Owner',
  owner_email: 'alice@example.com',
  webhook_url: null,
  webhook_secret_enc: 'v1.secret',
  api_key_hash: hex('a'),
  claim_token_hash: hex('c'),
  tier: 'free',
  registration_source: 'api',
  intent_type: 'networking',
  registered_at: time(9),
}));
export const agentProfileUpdated = builder('AgentProfileUpdated', () => ({ agent_id: ALICE, name: 'Alice Renamed' }));
export const superAdminGranted = builder('SuperAdminGranted', () => ({ email: 'admin@example.com', granted_at: time(9) }));
export const monthlyCreditsGranted = builder('MonthlyCreditsGranted', () => ({
  agent_id: ALICE,
  cycle: 0,
  amount_mc: 10_000,
  balance_after_mc: 10_000,
  cycle_start: time(9),
  next_grant_at: '2026-04-10T09:00:00.000Z',
}));

// humans
export const agentClaimed = builder('AgentClaimed', () => ({ agent_id: ALICE, claimed_via: 'email_otp', user_id: null, claimed_at: time(10) }));
export const agentOwnerLinked = builder('AgentOwnerLinked', () => ({ agent_id: ALICE, user_id: USER, linked_at: time(10) }));
export const apiKeyReplaced = builder('ApiKeyReplaced', () => ({
  agent_id: ALICE,
  old_key_hash: hex('a'),
  new_key_hash: hex('b'),
  reason: 'rotation',
  replaced_at: time(11),
}));
export const autoPostPrefsChanged = builder('AutoPostPrefsChanged', () => ({ agent_id: ALICE, auto_post_on_scout: false, changed_at: time(11) }));
export const userRegistered = builder('UserRegistered', () => ({
  user_id: USER,
  email: 'member@example.com',
  full_name: 'Mem Ber',
  password_hash: 'scrypt$salt$hash',
  registered_at: time(9),
}));
export const mailQueued = builder('MailQueued', () => ({
  mail_id: 'mail_1',
  template: 'signup_code',
  to: 'member@example.com',
  params_enc: 'v1.params',
  queued_at: time(9),
}));
export const mailSent = builder('MailSent', () => ({ mail_id: 'mail_1', attempt: 1, transport: 'outbox', message_id: null, sent_at: time(9, 1) }));
export const mailSendFailed = builder('MailSendFailed', () => ({
  mail_id: 'mail_1',
  attempt: 1,
  error: 'connection refused',
  final: false,
  failed_at: time(9, 1),
}));
export const digestProduced = builder('DigestProduced', () => ({
  digest_id: 'dig_1',
  user_id: USER,
  agent_id: ALICE,
  items: [{ agent_id: BOB, name: 'Bob', shared_capabilities: ['lead-gen'], reason: 'shares lead-gen' }],
  since: time(0),
  produced_at: time(12),
}));
export const digestRead = builder('DigestRead', () => ({ digest_id: 'dig_1', user_id: USER, read_at: time(13) }));
export const matchCreated = builder('MatchCreated', () => ({
  match_id: 'mtc_1',
  user_a_id: USER,
  user_b_id: 'usr_other0000000000000000',
  reason: 'both in lead-gen',
  created_by: 'admin@example.com',
  created_at: time(12),
}));
export const matchMessageSent = builder('MatchMessageSent', () => ({
  match_id: 'mtc_1',
  message_id: 'msg_match1',
  sender_id: USER,
  recipient_id: 'usr_other0000000000000000',
  content: 'Hello',
  sent_at: time(12, 5),
}));
export const matchMessageDeleted = builder('MatchMessageDeleted', () => ({
  match_id: 'mtc_1',
  message_id: 'msg_match1',
  deleted_by: USER,
  deleted_at: time(12, 10),
}));
export const matchMessageReported = builder('MatchMessageReported', () => ({
  match_id: 'mtc_1',
  message_id: 'msg_match1',
  reported_by: 'usr_other0000000000000000',
  reason: 'spam',
  details: null,
  reported_at: time(12, 10),
}));
export const matchMessagesRead = builder('MatchMessagesRead', () => ({
  match_id: 'mtc_1',
  user_id: 'usr_other0000000000000000',
  message_ids: ['msg_match1'],
  read_at: time(12, 20),
}));

// feed
export const postPublished = builder('PostPublished', () => ({
  post_id: POST,
  agent_id: ALICE,
  agent_name: 'Alice',
  title: 'Looking for leads',
  body: 'In #saas and #b2b',
  post_type: 'signal_found',
  room_slug: 'lead-gen',
  hashtags: ['saas', 'b2b'],
  published_at: time(10),
  charge: charge(100, 9_900),
}));
export const commentAdded = builder('CommentAdded', () => ({
  comment_id: COMMENT,
  post_id: POST,
  agent_id: BOB,
  agent_name: 'Bob',
  parent_comment_id: null,
  reply_to_comment_id: null,
  content: 'Interested',
  post_author_id: ALICE,
  post_room_slug: 'lead-gen',
  created_at: time(10, 5),
  charge: charge(50, 4_950, 'comment'),
}));
export const commentUpvoteToggled = builder('CommentUpvoteToggled', () => ({
  post_id: POST,
  comment_id: COMMENT,
  agent_id: ALICE,
  upvoted: true,
  toggled_at: time(10, 6),
}));
export const postReactionToggled = builder('PostReactionToggled', () => ({
  post_id: POST,
  agent_id: BOB,
  reaction: 'like',
  active: true,
  toggled_at: time(10, 7),
}));
export const pollVoted = builder('PollVoted', () => ({ post_id: POST, agent_id: BOB, option_index: 1, post_author_id: ALICE, voted_at: time(10, 8) }));
export const postFlagged = builder('PostFlagged', () => ({ post_id: POST, agent_id: BOB, reason: null, flag_count: 1, flagged_at: time(10, 9) }));
export const postGhosted = builder('PostGhosted', () => ({ post_id: POST, post_author_id: ALICE, flag_count: 5, ghosted_at: time(10, 10) }));
export const agentGhosted = builder('AgentGhosted', () => ({ agent_id: ALICE, flag_count: 5, ghosted_at: time(11) }));
export const signalBoosted = builder('SignalBoosted', () => ({
  post_id: POST,
  agent_id: BOB,
  post_author_id: ALICE,
  boosted_at: time(10, 11),
  charge: charge(100, 4_900, 'boost'),
}));
export const roomMerged = builder('RoomMerged', () => ({ room_slug: 'custom-room', into: 'lead-gen', by: 'admin@example.com', merged_at: time(12) }));
export const roomHidden = builder('RoomHidden', () => ({ room_slug: 'custom-room', by: 'admin@example.com', hidden_at: time(12) }));
export const postScheduled = builder('PostScheduled', () => ({
  post_id: 'pst_scheduled000000000000',
  agent_id: ALICE,
  agent_name: 'Alice',
  title: 'Tomorrow',
  body: 'Scheduled #launch',
  post_type: 'activity_summary',
  room_slug: null,
  hashtags: ['launch'],
  poll: null,
  signal_hash: hex('5'),
  publish_at: '2026-03-11T09:00:00.000Z',
  scheduled_at: time(10),
  charge: charge(100, 9_900),
}));
export const scheduledPostCancelled = builder('ScheduledPostCancelled', () => ({
  post_id: 'pst_scheduled000000000000',
  agent_id: ALICE,
  cancelled_at: time(11),
  charge: charge(-100, 10_000),
}));
export const roomPostPinned = builder('RoomPostPinned', () => ({
  room_slug: 'lead-gen',
  post_id: POST,
  agent_id: BOB,
  post_author_id: ALICE,
  pinned_at: time(11),
}));
export const roomPostUnpinned = builder('RoomPostUnpinned', () => ({ room_slug: 'lead-gen', post_id: POST, agent_id: BOB, unpinned_at: time(12) }));
export const imageUploaded = builder('ImageUploaded', () => ({
  image_id: 'img_1',
  agent_id: ALICE,
  content_type: 'image/png',
  size_bytes: 2048,
  sha256: hex('d'),
  uploaded_at: time(10),
}));

// messaging
export const directMessageSent = builder('DirectMessageSent', () => ({
  dm_id: 'dm_1',
  agent_id: ALICE,
  from_agent_id: ALICE,
  from_agent_name: 'Alice',
  to_agent_id: BOB,
  to_user_id: null,
  to_email: null,
  message: 'Hi Bob',
  sent_at: time(10),
  charge: charge(250, 9_750, 'dm'),
  owner_user_id: null,
}));
export const agentBlocked = builder('AgentBlocked', () => ({ agent_id: ALICE, blocked_agent_id: BOB, blocked_at: time(10) }));
export const agentUnblocked = builder('AgentUnblocked', () => ({ agent_id: ALICE, blocked_agent_id: BOB, unblocked_at: time(11) }));
export const a2aMessageSent = builder('A2AMessageSent', () => ({
  message_id: 'msg_a2a1',
  agent_id: ALICE,
  from_agent_id: ALICE,
  from_agent_name: 'Alice',
  to_agent_id: BOB,
  intent: 'intro_request',
  payload: { topic: 'leads' },
  signature: null,
  sent_at: time(10),
  charge: charge(250, 9_750, 'a2a_message'),
}));
export const meshThreadCreated = builder('MeshThreadCreated', () => ({
  thread_id: 'thr_1',
  agent_id: ALICE,
  agent_name: 'Alice',
  name: 'Deal room',
  participant_agent_ids: [ALICE, BOB, CAROL],
  first_message_id: 'msg_thread1',
  first_message: 'Welcome',
  created_at: time(10),
  charge: charge(500, 9_500, 'mesh_thread'),
}));
export const meshThreadMessagePosted = builder('MeshThreadMessagePosted', () => ({
  thread_id: 'thr_1',
  message_id: 'msg_thread2',
  agent_id: BOB,
  agent_name: 'Bob',
  participant_agent_ids: [ALICE, BOB, CAROL],
  message: 'Thanks',
  posted_at: time(10, 30),
  charge: charge(100, 4_900, 'mesh_message'),
}));
export const notificationsRead = builder('NotificationsRead', () => ({ agent_id: ALICE, notification_ids: ['ntf_unknown'], read_at: time(12) }));
export const notificationsExpired = builder('NotificationsExpired', () => ({
  agent_id: ALICE,
  notification_ids: ['ntf_unknown'],
  expired_at: '2026-06-10T00:00:00.000Z',
}));
export const agentHeartbeatReceived = builder('AgentHeartbeatReceived', () => ({ agent_id: ALICE, status: 'online', capacity: 3, received_at: time(10) }));

// matching
export const matchingRunCompleted = builder('MatchingRunCompleted', () => ({
  run_id: 'run_1',
  agent_id: ALICE,
  agent_name: 'Alice',
  gives: ['design'],
  asks: ['funding'],
  limit: 10,
  matches: [{ agent_id: BOB, name: 'Bob', they_give: ['funding'], they_ask: ['design'], score: 2 }],
  auto_post: { status: 'skipped', reason: 'toggle_off' },
  completed_at: time(14),
  charge: charge(1_000, 9_000, 'matching_run'),
}));

// webhooks
export const webhookConfigured = builder('WebhookConfigured', () => ({
  agent_id: ALICE,
  webhook_url: 'https://hooks.example.com/alice',
  events: ['new_dm'],
  signature_scheme: 'body',
  configured_at: time(11),
}));
export const webhookSecretRegenerated = builder('WebhookSecretRegenerated', () => ({
  agent_id: ALICE,
  webhook_secret_enc: 'v1.new-secret',
  regenerated_at: time(12),
}));
export const webhookTestFired = builder('WebhookTestFired', () => ({ agent_id: ALICE, ping_id: 'ntf_ping1', fired_at: time(12) }));
export const webhookDisabled = builder('WebhookDisabled', () => ({ agent_id: ALICE, reason: 'gone', delivery_id: 'dlv_1', disabled_at: time(13) }));
export const webhookDeliveryQueued = builder('WebhookDeliveryQueued', () => ({
  delivery_id: 'dlv_1',
  agent_id: ALICE,
  inbox_id: 'svc_ping:ntf_ping1',
  event: 'svc_ping',
  body: '{"event":"svc_ping"}',
  url: 'https://hooks.example.com/alice',
  queued_at: time(12),
}));
export const webhookDeliveryAttempted = builder('WebhookDeliveryAttempted', () => ({
  delivery_id: 'dlv_1',
  agent_id: ALICE,
  inbox_id: 'svc_ping:ntf_ping1',
  attempt: 1,
  url: 'https://hooks.example.com/alice',
  status_code: 200,
  outcome: 'delivered',
  error: null,
  duration_ms: 12,
  attempted_at: time(12, 1),
  next_attempt_at: null,
}));

/** The id `recorded` (test/helpers/projection-spec.ts) gives the event at a log position. */
export const eventId = (position: number) => `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
/** The `occurred_at` `recorded` gives every event. */
export const OCCURRED_AT = '2026-03-10T09:30:00.000Z';

/** The document with this _id, or undefined. */
export const byId = <D extends { _id: string }>(docs: D[] | undefined, id: string): D | undefined => docs?.find((d) => d._id === id);
