import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { createRequire } from 'node:module';
import { BoundedCache } from '../../events/kernel/cache.ts';
import { DAY } from '../../events/kernel/clock.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { isStackOverflow, stringifyIteratively } from '../../events/kernel/json.ts';
import type { A2ASignature, PassportKeyIssued } from '../../events/messaging.ts';
import { passportStream } from '../../events/messaging.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

ed.hashes.sha512 = sha512;

// canonicalize (RFC 8785 JCS) is a CommonJS module exporting the function itself.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (input: unknown) => string | undefined;

/** Passport attestations are valid for 30 days (shared DECISIONS); a new one is signed for each 30-day period of the key. */
export const PASSPORT_VALIDITY_MS = 30 * DAY;

export interface PassportKey {
  key_id: string;
  public_key: string;
  private_key_enc: string;
  issued_at: string;
  retired_at: string | null;
}

export interface PassportState {
  current: PassportKey | null;
  previous: PassportKey[];
}

/** Every event appended to `passport-<agent_id>`. */
export type PassportStreamEvent = PassportKeyIssued;

export const passportAggregate: Aggregate<PassportState, PassportStreamEvent> = {
  initialState: () => ({ current: null, previous: [] }),
  evolve(state, event) {
    switch (event.type) {
      case 'PassportKeyIssued': {
        const d = event.data;
        const key: PassportKey = { key_id: d.key_id, public_key: d.public_key, private_key_enc: d.private_key_enc, issued_at: d.issued_at, retired_at: null };
        return { current: key, previous: state.current ? [{ ...state.current, retired_at: d.issued_at }, ...state.previous] : state.previous };
      }
      default: {
        // The stream holds one event type, so `event` itself does not narrow to never; its type does.
        const _exhaustive: never = event.type;
        return state;
      }
    }
  },
};

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const fromB64u = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'));

/** RFC 8785 (JCS) canonical JSON: the exact bytes that are signed. */
export function canonicalBytes(value: unknown): Uint8Array {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    // canonicalize recurses: a value too deep for it takes the iterative JCS form (same bytes).
    if (!isStackOverflow(err)) throw err;
    text = stringifyIteratively(value, true);
  }
  if (text === undefined) throw new Error('value cannot be canonicalised');
  return new TextEncoder().encode(text);
}

/** A new keypair as the handler makes it (random, so outside `decide`): the private key leaves only encrypted. */
export interface NewPassportKey {
  key_id: string;
  public_key: string;
  private_key_enc: string;
}

/** IssuePassport: the first key, on first use; nothing when the agent already has one (concurrent first uses append one key). */
export type IssuePassport = Command<'IssuePassport', { agent_id: string }, { now: Date; key: NewPassportKey }>;
/** RegeneratePassport (free): a new keypair replaces the current one, whose public key stays listed. */
export type RegeneratePassport = Command<'RegeneratePassport', { agent_id: string }, { now: Date; key: NewPassportKey }>;

function keyIssued(command: IssuePassport | RegeneratePassport, state: PassportState): PassportKeyIssued {
  return {
    type: 'PassportKeyIssued',
    data: {
      agent_id: command.data.agent_id,
      ...command.metadata.key,
      issued_at: command.metadata.now.toISOString(),
      replaces_key_id: state.current?.key_id ?? null,
    },
  };
}

export function decideIssuePassport(command: IssuePassport, state: PassportState): PassportKeyIssued[] {
  return state.current ? [] : [keyIssued(command, state)];
}

export function decideRegeneratePassport(command: RegeneratePassport, state: PassportState): PassportKeyIssued[] {
  return [keyIssued(command, state)];
}

function newPassportKey(secrets: SecretBox, agentId: string, commandId: string): NewPassportKey {
  const { secretKey, publicKey } = ed.keygen();
  return { key_id: deriveId('key', commandId, agentId), public_key: b64u(publicKey), private_key_enc: secrets.encrypt(b64u(secretKey)) };
}

/**
 * The agent's passport key, issued on first use (a deterministic command id makes concurrent
 * first uses append one key). Returns the folded passport, read back from the stream: a
 * concurrent first use may have stored its key under the same event id, and that key is the one.
 */
export async function ensurePassport(bus: CommandBus, secrets: SecretBox, agentId: string, now: Date): Promise<PassportState> {
  const loaded = await bus.load(passportStream(agentId), passportAggregate);
  if (loaded.state.current) return loaded.state;
  const ctx: CommandContext = { commandId: `passport-first:${agentId}`, actor: agentId, requestId: null, now };
  const command: IssuePassport = {
    type: 'IssuePassport',
    data: { agent_id: agentId },
    metadata: { now, key: newPassportKey(secrets, agentId, ctx.commandId) },
  };
  await bus.handle(passportStream(agentId), passportAggregate, (state) => decideIssuePassport(command, state), ctx);
  return (await bus.load(passportStream(agentId), passportAggregate)).state;
}

/** Regenerates the agent's passport key; the passport is read back from the stream (a retried command keeps the key it stored first). */
export async function regeneratePassport(bus: CommandBus, secrets: SecretBox, agentId: string, ctx: CommandContext) {
  const command: RegeneratePassport = {
    type: 'RegeneratePassport',
    data: { agent_id: agentId },
    metadata: { now: ctx.now, key: newPassportKey(secrets, agentId, ctx.commandId) },
  };
  const r = await bus.handle(passportStream(agentId), passportAggregate, (state) => decideRegeneratePassport(command, state), ctx);
  return { state: (await bus.load(passportStream(agentId), passportAggregate)).state, position: r.position };
}

/** Decrypted signing keys by key id, so a passport's key is decrypted once while it signs. */
const signingKeys = new BoundedCache<string, Uint8Array>({ max: 10_000 });

function secretKeyOf(key: PassportKey, secrets: SecretBox): Uint8Array {
  return signingKeys.remember(key.key_id, () => fromB64u(secrets.decrypt(key.private_key_enc)));
}

/** Signs `document` (canonical JSON) with the key; the signature is base64url of the 64 raw bytes. */
export function signWith(key: PassportKey, secrets: SecretBox, document: unknown): string {
  return b64u(ed.sign(canonicalBytes(document), secretKeyOf(key, secrets)));
}

export function verifySignature(publicKey: string, document: unknown, signature: string): boolean {
  try {
    return ed.verify(fromB64u(signature), canonicalBytes(document), fromB64u(publicKey));
  } catch {
    return false;
  }
}

/** The signed fields of an A2A message, in the shape third parties rebuild to verify it. */
export function a2aSignedDocument(m: { message_id: string; from_agent_id: string; to_agent_id: string; intent: string; payload: unknown; signed_at: string }) {
  return { message_id: m.message_id, from_agent_id: m.from_agent_id, to_agent_id: m.to_agent_id, intent: m.intent, payload: m.payload, signed_at: m.signed_at };
}

export function signA2A(
  key: PassportKey,
  secrets: SecretBox,
  m: { message_id: string; from_agent_id: string; to_agent_id: string; intent: string; payload: unknown },
  signedAt: string,
): A2ASignature {
  return {
    alg: 'Ed25519',
    key_id: key.key_id,
    public_key: key.public_key,
    signed_at: signedAt,
    value: signWith(key, secrets, a2aSignedDocument({ ...m, signed_at: signedAt })),
  };
}

/**
 * The public passport: the current key, the earlier keys (so old signatures stay verifiable) and a
 * capability attestation signed by the current key. The attestation covers the 30-day period of
 * the key that contains `now` (issued_at = period start), so it is stable within a period and
 * renewed without any write.
 */
export function publicPassport(state: PassportState, agent: { agent_id: string; name: string; capabilities: string[] }, secrets: SecretBox, now: Date) {
  const key = state.current;
  if (!key) throw new Error('passport not issued');
  const start = Date.parse(key.issued_at);
  const period = Math.max(0, Math.floor((now.getTime() - start) / PASSPORT_VALIDITY_MS));
  const issuedAt = new Date(start + period * PASSPORT_VALIDITY_MS).toISOString();
  const attestation = {
    type: 'agent_capability_attestation',
    agent_id: agent.agent_id,
    name: agent.name,
    capabilities: agent.capabilities,
    key_id: key.key_id,
    public_key: key.public_key,
    issued_at: issuedAt,
    expires_at: new Date(start + (period + 1) * PASSPORT_VALIDITY_MS).toISOString(),
  };
  return {
    agent_id: agent.agent_id,
    alg: 'Ed25519',
    key_id: key.key_id,
    public_key: key.public_key,
    public_key_fingerprint: createHash('sha256').update(fromB64u(key.public_key)).digest('hex').slice(0, 32),
    key_issued_at: key.issued_at,
    attestation,
    attestation_signature: signWith(key, secrets, attestation),
    previous_keys: state.previous.map((k) => ({ key_id: k.key_id, public_key: k.public_key, issued_at: k.issued_at, retired_at: k.retired_at })),
  };
}
