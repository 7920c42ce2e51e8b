import { CHAIN_GENESIS, chainHashes } from '../../events/kernel/signing.ts';
import type { ContractOpened } from '../../events/marketplace.ts';
import { contractStream } from '../../events/marketplace.ts';
import type { EventLog, RecordedEvent } from '../../events/store/port.ts';

/** What the evidence is read from: the event log itself. */
export type EvidenceSource = Pick<EventLog, 'readStream' | 'readAll'>;

/** One log event as the bundle shows it: where it sits in the log, and what it recorded. */
export interface EvidenceEntry {
  position: number;
  stream: string;
  revision: number;
  id: string;
  type: string;
  occurred_at: string;
  actor: string | null;
  data: unknown;
}

/** The evidence bundle of a contract (docs/MARKETPLACE.md "Evidence bundle"). */
export interface EvidenceBundle {
  format: 'agent-network/evidence/v1';
  contract_id: string;
  generated_at: string;
  listing: EvidenceEntry | null;
  response: EvidenceEntry | null;
  /** Every event of `contract-<id>` but its queued mails (addresses and sealed parameters), in stream order. */
  events: EvidenceEntry[];
  /** SHA-256 chain over `[listing, response, ...events]`: link i = sha256(link i-1 + "\n" + JCS(entry i)), from 64 zeros. */
  chain: { algorithm: 'sha256'; genesis: string; links: string[]; head: string };
}

function entryOf(e: RecordedEvent): EvidenceEntry {
  return {
    position: e.position,
    stream: e.stream,
    revision: e.revision,
    id: e.id,
    type: e.type,
    occurred_at: e.metadata.occurred_at,
    actor: e.metadata.actor,
    data: e.data,
  };
}

/** The contract's own events (its audit trail), read straight from `contract-<id>`: mail notifications left out. */
export async function contractEvents(log: EvidenceSource, contractId: string): Promise<RecordedEvent[]> {
  return (await log.readStream(contractStream(contractId))).filter((e) => e.type !== 'MailQueued');
}

async function eventAt(log: EvidenceSource, position: number): Promise<RecordedEvent | null> {
  const [e] = await log.readAll({ after: position - 1, maxCount: 1 });
  return e && e.position === position ? e : null;
}

/** The chain entries in order: the listing's creation, the response, then the contract's events. */
export function chainEntries(b: Pick<EvidenceBundle, 'listing' | 'response' | 'events'>): unknown[] {
  return [b.listing, b.response, ...b.events];
}

/** Builds the bundle from the log: null when the contract does not exist. */
export async function buildEvidence(log: EvidenceSource, contractId: string, generatedAt: Date): Promise<EvidenceBundle | null> {
  return (await evidenceWithRevision(log, contractId, generatedAt))?.bundle ?? null;
}

/** The bundle, with the revision of the stream's last event it was read at (mails included, so it is the stream's revision). */
async function evidenceWithRevision(log: EvidenceSource, contractId: string, generatedAt: Date) {
  const all = await log.readStream(contractStream(contractId));
  const events = all.filter((e) => e.type !== 'MailQueued');
  const opened = events.find((e) => e.type === 'ContractOpened');
  if (!opened) return null;
  const o = opened.data as ContractOpened['data'];
  const listing = await eventAt(log, o.listing_position);
  const response = await eventAt(log, o.response_position);
  const body = { listing: listing ? entryOf(listing) : null, response: response ? entryOf(response) : null, events: events.map(entryOf) };
  const links = chainHashes(chainEntries(body));
  const bundle: EvidenceBundle = {
    format: 'agent-network/evidence/v1',
    contract_id: contractId,
    generated_at: generatedAt.toISOString(),
    ...body,
    chain: { algorithm: 'sha256', genesis: CHAIN_GENESIS, links, head: links[links.length - 1] ?? CHAIN_GENESIS },
  };
  return { bundle, revision: all[all.length - 1]?.revision ?? 0 };
}

/** Checks a bundle's chain: every link recomputed from its entries (false after any change to them). */
export function verifyEvidenceChain(bundle: EvidenceBundle): boolean {
  const links = chainHashes(chainEntries(bundle), bundle.chain.genesis);
  return links.length === bundle.chain.links.length && links.every((h, i) => h === bundle.chain.links[i]) && bundle.chain.head === links[links.length - 1];
}

/** The chain head over the evidence as it stands, and the contract stream's revision it covers (what a ruling signs). */
export async function evidenceHead(log: EvidenceSource, contractId: string): Promise<{ revision: number; head: string }> {
  const r = await evidenceWithRevision(log, contractId, new Date(0));
  return { revision: r?.revision ?? 0, head: r?.bundle.chain.head ?? CHAIN_GENESIS };
}
