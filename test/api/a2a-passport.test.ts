import { expect } from 'chai';
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DAY, HOUR } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

// A third party's view: node's own Ed25519 and an RFC 8785 (JCS) library, nothing of the service.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string;
const nodeVerify = (publicKeyB64u: string, document: unknown, signatureB64u: string) =>
  verify(
    null,
    Buffer.from(canonicalize(document), 'utf8'),
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKeyB64u }, format: 'jwk' }),
    Buffer.from(signatureB64u, 'base64url'),
  );

type Agent = { agent_id: string; api_key: string };

describe('api: passports and A2A messages', () => {
  let svc: TestService;
  let a: Agent;
  let b: Agent;
  const send = (from: Agent, body: Record<string, unknown>) => svc.req('POST', '/api/agent/a2a/message', { apiKey: from.api_key, body });
  const balance = async (x: Agent) => (await svc.req('GET', `/api/protocol/agents/${x.agent_id}/credits`, { apiKey: x.api_key })).body.balance;

  before(async () => {
    svc = await startTestService();
    a = await svc.register({ capabilities: ['lead-gen', 'b2b-sales'] });
    b = await svc.register();
  });
  after(async () => {
    await svc.stop();
  });

  it('publishes a passport: Ed25519 public key and a capability attestation valid 30 days, verifiable with node crypto', async () => {
    const p = await svc.req('GET', `/api/agent/${a.agent_id}/passport`);
    expect(p.status).to.equal(200);
    expect(p.body).to.include({ agent_id: a.agent_id, alg: 'Ed25519' });
    expect(p.body.public_key).to.match(/^[A-Za-z0-9_-]{43}$/);
    const att = p.body.attestation;
    expect(att).to.include({ agent_id: a.agent_id, public_key: p.body.public_key, key_id: p.body.key_id });
    expect(att.capabilities).to.deep.equal(['lead-gen', 'b2b-sales']);
    expect(Date.parse(att.expires_at) - Date.parse(att.issued_at)).to.equal(30 * DAY);
    expect(nodeVerify(p.body.public_key, att, p.body.attestation_signature)).to.equal(true);
    expect(nodeVerify(p.body.public_key, { ...att, capabilities: ['admin'] }, p.body.attestation_signature)).to.equal(false);
    expect((await svc.req('GET', `/api/agent/${a.agent_id}/passport`)).body).to.deep.equal(p.body);
    expect((await svc.req('GET', '/api/agent/agt_missing/passport')).status).to.equal(404);
  });

  it('keeps private keys encrypted at rest: the raw key is in neither the events nor the database file', async () => {
    const events = (await svc.running.services.log.readStream(`passport-${a.agent_id}`)).filter((e) => e.type === 'PassportKeyIssued');
    expect(events).to.have.length(1);
    const enc = (events[0].data as { private_key_enc: string }).private_key_enc;
    expect(enc).to.match(/^v1\./);
    const raw = svc.running.services.secrets.decrypt(enc);
    expect(raw).to.match(/^[A-Za-z0-9_-]{43}$/);
    const db = readFileSync(join(svc.dataDir, 'events.sqlite'));
    const wal = (() => {
      try {
        return readFileSync(join(svc.dataDir, 'events.sqlite-wal'));
      } catch {
        return Buffer.alloc(0);
      }
    })();
    expect(db.includes(raw)).to.equal(false);
    expect(wal.includes(raw)).to.equal(false);
    expect(JSON.stringify(events[0].data)).to.not.include(raw);
  });

  it('charges exactly 0.25 per A2A message and delivers it to the A2A inbox and the agent inbox', async () => {
    const r = await send(a, { to_agent_id: b.agent_id, intent: 'intro_request', payload: { reason: 'Both in B2B', stage: 'seed', sector: 'fintech' } });
    expect(r.status).to.equal(200);
    expect(r.body.message_id).to.match(/^msg_/);
    expect(r.body).to.include({ credits_charged: 0.25, balance: 49.75, signature: null, intent: 'intro_request' });
    expect(await balance(a)).to.equal(49.75);
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    expect(history.body.transactions[0]).to.include({ action: 'a2a_message', amount: 0.25, balance_after: 49.75 });
    expect(history.body.transactions[0].reference).to.deep.equal({ message_id: r.body.message_id });
    const inbox = await svc.req('GET', '/api/agent/a2a/inbox', { apiKey: b.api_key });
    expect(inbox.status).to.equal(200);
    expect(inbox.body.total).to.equal(1);
    expect(inbox.body.items[0]).to.include({ message_id: r.body.message_id, from_agent_id: a.agent_id, intent: 'intro_request' });
    expect(inbox.body.items[0].payload).to.deep.equal({ reason: 'Both in B2B', stage: 'seed', sector: 'fintech' });
    expect((await svc.req('GET', '/api/agent/a2a/inbox', { apiKey: a.api_key })).body.total).to.equal(0);
    const all = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
    expect(all.body.events[0]).to.include({ event: 'a2a_message' });
  });

  it('signs with sign: true; the signature verifies with node crypto.verify against the published passport key', async () => {
    const payload = { reason: 'Deal', amount: 1200.5, nested: { z: 1, a: [true, null, 'é'] } };
    const r = await send(a, { to_agent_id: b.agent_id, intent: 'deal_offer', payload, sign: true });
    expect(r.status).to.equal(200);
    const sig = r.body.signature;
    expect(sig).to.include({ alg: 'Ed25519' });
    const passport = (await svc.req('GET', `/api/agent/${a.agent_id}/passport`)).body;
    expect(sig.public_key).to.equal(passport.public_key);
    const received = (await svc.req('GET', '/api/agent/a2a/inbox', { apiKey: b.api_key })).body.items[0];
    const document = {
      message_id: received.message_id,
      from_agent_id: received.from_agent_id,
      to_agent_id: received.to_agent_id,
      intent: received.intent,
      payload: received.payload,
      signed_at: received.signature.signed_at,
    };
    expect(nodeVerify(passport.public_key, document, received.signature.value)).to.equal(true);
    expect(nodeVerify(passport.public_key, { ...document, payload: { ...payload, amount: 1201 } }, received.signature.value)).to.equal(false);
    expect(nodeVerify(passport.public_key, { ...document, to_agent_id: a.agent_id }, received.signature.value)).to.equal(false);

    // Regeneration: a new key signs from now on; the old signature stays verifiable against the listed old key.
    const regen = await svc.req('POST', '/api/agent/passport/regenerate', { apiKey: a.api_key });
    expect(regen.status).to.equal(200);
    expect(regen.body.public_key).to.not.equal(passport.public_key);
    const old = regen.body.previous_keys.find((k: { key_id: string }) => k.key_id === sig.key_id);
    expect(old).to.include({ public_key: passport.public_key });
    expect(old.retired_at).to.be.a('string');
    expect(nodeVerify(old.public_key, document, received.signature.value)).to.equal(true);
    const next = await send(a, { to_agent_id: b.agent_id, intent: 'response', payload: {}, sign: true });
    expect(next.body.signature.key_id).to.equal(regen.body.key_id);
    expect(
      nodeVerify(
        regen.body.public_key,
        {
          message_id: next.body.message_id,
          from_agent_id: a.agent_id,
          to_agent_id: b.agent_id,
          intent: 'response',
          payload: {},
          signed_at: next.body.signature.signed_at,
        },
        next.body.signature.value,
      ),
    ).to.equal(true);
  });

  it('refuses a blocked sender with 403 "Message not delivered" and charges nothing', async () => {
    expect((await svc.req('POST', `/api/agent/blocks/${a.agent_id}`, { apiKey: b.api_key })).status).to.equal(200);
    const before = await balance(a);
    const r = await send(a, { to_agent_id: b.agent_id, intent: 'other', payload: {} });
    expect(r.status).to.equal(403);
    expect(r.body).to.include({ detail: 'Message not delivered', code: 'message_not_delivered' });
    expect(await balance(a)).to.equal(before);
    await svc.req('DELETE', `/api/agent/blocks/${a.agent_id}`, { apiKey: b.api_key });
  });

  it('validates intents and targets; needs credentials', async () => {
    expect((await send(a, { to_agent_id: b.agent_id, intent: 'spam' })).status).to.equal(422);
    expect((await send(a, { to_agent_id: b.agent_id, intent: 'other', payload: 'text' })).status).to.equal(422);
    expect((await send(a, { to_agent_id: a.agent_id, intent: 'other' })).status).to.equal(400);
    expect((await send(a, { to_agent_id: 'agt_nobody', intent: 'other' })).status).to.equal(404);
    expect((await svc.req('POST', '/api/agent/a2a/message', { body: { to_agent_id: b.agent_id, intent: 'other' } })).status).to.equal(401);
    expect((await svc.req('GET', '/api/agent/a2a/inbox')).status).to.equal(401);
    expect((await svc.req('POST', '/api/agent/passport/regenerate')).status).to.equal(401);
  });

  it('renews the attestation for each 30-day period of the key, with no write', async () => {
    const p = (await svc.req('GET', `/api/agent/${b.agent_id}/passport`)).body;
    const head = await svc.running.services.log.headPosition();
    expect((await svc.req('GET', `/api/agent/${b.agent_id}/passport`)).body).to.deep.equal(p);
    svc.clock.advance(30 * DAY + HOUR);
    const later = (await svc.req('GET', `/api/agent/${b.agent_id}/passport`)).body;
    expect(later.attestation.issued_at).to.equal(p.attestation.expires_at);
    expect(later.public_key).to.equal(p.public_key);
    expect(nodeVerify(later.public_key, later.attestation, later.attestation_signature)).to.equal(true);
    expect(await svc.running.services.log.headPosition()).to.equal(head);
  });
});
