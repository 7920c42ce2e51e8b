import { expect } from 'chai';
import { webhooksProjection } from '../../../projections/webhooks/webhooks.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, OCCURRED_AT, time } = f;
const URL = 'https://hooks.example.com/alice';
const spec = ProjectionSpecification.for(webhooksProjection);

describe('projections: webhooks', () => {
  it("registration sets the agent's webhook: every event, timestamped signatures (the scheme of registrations before schemes were recorded), the encrypted secret, enabled", () =>
    spec.given([f.agentRegistered({ webhook_url: URL })]).then((models) => {
      expect(models.webhooks).to.deep.equal([
        {
          _id: ALICE,
          _pos: 1,
          agent_id: ALICE,
          webhook_url: URL,
          events: null,
          signature_scheme: 'timestamped',
          secret_enc: 'v1.secret',
          previous_secret_enc: null,
          previous_valid_until: null,
          disabled: false,
          disabled_reason: null,
          configured_at: time(9),
        },
      ]);
      expect(models.webhook_deliveries).to.deep.equal([]);
      expect(models.webhook_attempts).to.deep.equal([]);
    }));

  it('a disabled webhook is enabled again by a configuration, or by a new URL in the profile', () =>
    spec
      .given([
        f.agentRegistered(),
        f.webhookDisabled(),
        f.webhookConfigured(),
        f.webhookDisabled({ disabled_at: time(14) }),
        f.agentProfileUpdated({ name: undefined, webhook_url: URL }),
      ])
      .then((models) => {
        expect(models.webhooks[0]).to.deep.include({
          webhook_url: URL,
          events: ['new_dm'],
          signature_scheme: 'body',
          disabled: false,
          disabled_reason: null,
          disabled_at: time(14),
          configured_at: OCCURRED_AT,
          _pos: 5,
        });
      }));

  it('a profile update without a webhook URL leaves the webhook; a new secret replaces the old', () =>
    spec.given([f.agentRegistered(), f.agentProfileUpdated(), f.webhookSecretRegenerated()]).then((models) => {
      expect(models.webhooks[0]).to.deep.include({ secret_enc: 'v1.new-secret', secret_regenerated_at: time(12), configured_at: time(9), _pos: 3 });
    }));

  it('a registration without a URL records no scheme yet', () =>
    spec.given([f.agentRegistered({ webhook_url: null })]).then((models) => {
      expect(models.webhooks[0]).to.deep.include({ webhook_url: null, signature_scheme: null });
    }));

  it('a rotation keeps the replaced secret until previous_valid_until; a rotation without overlap, or a regeneration, keeps none', () =>
    spec
      .given([f.agentRegistered(), f.webhookSecretRotated({ previous_valid_until: time(23) })])
      .then((models) => {
        expect(models.webhooks[0]).to.deep.include({
          secret_enc: 'v1.rotated-secret',
          previous_secret_enc: 'v1.secret',
          previous_valid_until: time(23),
          secret_regenerated_at: time(12),
        });
      })
      .then(() =>
        spec
          .given([
            f.agentRegistered(),
            f.webhookSecretRotated({ previous_valid_until: time(23) }),
            f.webhookSecretRotated({ webhook_secret_enc: 'v1.third', previous_valid_until: null, rotated_at: time(13) }),
          ])
          .then((models) => {
            expect(models.webhooks[0]).to.deep.include({ secret_enc: 'v1.third', previous_secret_enc: null, previous_valid_until: null });
          }),
      )
      .then(() =>
        spec.given([f.agentRegistered(), f.webhookSecretRotated({ previous_valid_until: time(23) }), f.webhookSecretRegenerated()]).then((models) => {
          expect(models.webhooks[0]).to.deep.include({ secret_enc: 'v1.new-secret', previous_secret_enc: null, previous_valid_until: null });
        }),
      ));

  it('a 410 disables the webhook with the reason', () =>
    spec.given([f.agentRegistered(), f.webhookDisabled()]).then((models) => {
      expect(models.webhooks[0]).to.deep.include({ disabled: true, disabled_reason: 'gone', disabled_at: time(13) });
    }));

  it('a queued delivery is pending and due at once', () =>
    spec.given([f.webhookDeliveryQueued()]).then((models) => {
      expect(models.webhook_deliveries).to.deep.equal([
        {
          _id: 'dlv_1',
          _pos: 1,
          delivery_id: 'dlv_1',
          agent_id: ALICE,
          inbox_id: 'svc_ping:ntf_ping1',
          event: 'svc_ping',
          url: URL,
          status: 'pending',
          attempts: 0,
          next_attempt_at: time(12),
          queued_at: time(12),
          last_status_code: null,
          last_error: null,
          seq: 1,
        },
      ]);
    }));

  it('each attempt is kept; a failure with a retry stays pending until the next attempt delivers', () => {
    const failed = f.webhookDeliveryAttempted({ outcome: 'failed', status_code: 500, error: 'HTTP 500', next_attempt_at: time(12, 5) });
    return spec.given([f.webhookDeliveryQueued(), failed, f.webhookDeliveryAttempted({ attempt: 2, attempted_at: time(12, 5) })]).then((models) => {
      expect(models.webhook_deliveries[0]).to.deep.include({
        status: 'delivered',
        attempts: 2,
        next_attempt_at: null,
        last_status_code: 200,
        last_error: null,
        last_attempt_at: time(12, 5),
        _pos: 3,
      });
      expect(models.webhook_attempts).to.deep.equal([
        { _id: 'dlv_1:1', _pos: 2, ...failed.data, seq: 2 },
        { _id: 'dlv_1:2', _pos: 3, ...f.webhookDeliveryAttempted({ attempt: 2, attempted_at: time(12, 5) }).data, seq: 3 },
      ]);
    });
  });

  it('a delivery without a retry ends gone (410) or given up', () =>
    spec
      .given([
        f.webhookDeliveryQueued(),
        f.webhookDeliveryAttempted({ outcome: 'gone', status_code: 410 }),
        f.webhookDeliveryQueued({ delivery_id: 'dlv_2' }),
        f.webhookDeliveryAttempted({ delivery_id: 'dlv_2', outcome: 'given_up', status_code: 500, attempt: 8 }),
        f.webhookDeliveryQueued({ delivery_id: 'dlv_3' }),
        f.webhookDeliveryAttempted({ delivery_id: 'dlv_3', outcome: 'refused', status_code: null, error: 'private address' }),
      ])
      .then((models) => {
        expect(models.webhook_deliveries.map((d) => [d._id, d.status])).to.deep.equal([
          ['dlv_1', 'gone'],
          ['dlv_2', 'given_up'],
          ['dlv_3', 'given_up'],
        ]);
      }));

  it('a replay is pending from its request, moves through its deliveries in order and ends completed; its attempts join the delivery log with their replay_id', () => {
    const requested = f.webhookReplayRequested({ delivery_ids: ['dlv_1', 'dlv_2'], deliveries: 2 });
    const failed = f.webhookReplayAttempted({ outcome: 'failed', status_code: 500, error: 'HTTP 500', next_attempt_at: time(13, 2) });
    const first = f.webhookReplayAttempted({ attempt: 2, attempted_at: time(13, 2) });
    const second = f.webhookReplayAttempted({ delivery_id: 'dlv_2', index: 1, attempted_at: time(13, 3) });
    return spec.given([requested]).then(async (models) => {
      expect(models.webhook_replays).to.deep.equal([
        {
          _id: 'rpl_1',
          _pos: 1,
          replay_id: 'rpl_1',
          agent_id: ALICE,
          requested_by: ALICE,
          requested_by_role: 'agent',
          deliveries: 2,
          delivery_ids: ['dlv_1', 'dlv_2'],
          sent: 0,
          status: 'pending',
          next_attempt_at: time(13),
          requested_at: time(13),
          seq: 1,
        },
      ]);
      await spec.given([requested, failed]).then((m) => {
        expect(m.webhook_replays[0]).to.deep.include({ status: 'pending', sent: 0, next_attempt_at: time(13, 2), last_outcome: 'failed' });
      });
      await spec.given([requested, failed, first]).then((m) => {
        expect(m.webhook_replays[0]).to.deep.include({ status: 'pending', sent: 1, next_attempt_at: time(13, 2) });
      });
      await spec.given([requested, failed, first, second]).then((m) => {
        expect(m.webhook_replays[0]).to.deep.include({ status: 'completed', sent: 2, next_attempt_at: null });
        expect(m.webhook_attempts.map((a) => [a._id, a.replay_id, a.outcome])).to.deep.equal([
          ['dlv_1:rpl_1:1', 'rpl_1', 'failed'],
          ['dlv_1:rpl_1:2', 'rpl_1', 'delivered'],
          ['dlv_2:rpl_1:1', 'rpl_1', 'delivered'],
        ]);
        // The original deliveries are not touched.
        expect(m.webhook_deliveries).to.deep.equal([]);
      });
    });
  });

  it('a replay of nothing is completed at once; a delivery that ends undelivered stops the replay', () =>
    spec
      .given([
        f.webhookReplayRequested({ delivery_ids: [], deliveries: 0 }),
        f.webhookReplayRequested({ replay_id: 'rpl_2' }),
        f.webhookReplayAttempted({ replay_id: 'rpl_2', outcome: 'refused', status_code: null, error: 'private address' }),
      ])
      .then((models) => {
        expect(models.webhook_replays.map((r) => [r._id, r.status, r.next_attempt_at, r.sent])).to.deep.equal([
          ['rpl_1', 'completed', null, 0],
          ['rpl_2', 'stopped', null, 0],
        ]);
      }));
});
