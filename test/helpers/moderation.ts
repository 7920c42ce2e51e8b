import { expect } from 'chai';
import { join } from 'node:path';
import { codeIn, waitForMails } from './mail.ts';
import type { TestService } from './service.ts';

export type Agent = { agent_id: string; api_key: string; owner_email: string };

let n = 0;

/**
 * Registers `count` agents and claims each by the lite claim (the code mailed to its owner
 * address, read from the outbox: `outbox`, or the service's default `$DATA_DIR/outbox`). Their
 * flags count once the clock is 24 hours past their registration (docs/MODERATION.md).
 */
export async function claimedAgents(svc: TestService, count: number, outbox = join(svc.dataDir, 'outbox')): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (let i = 0; i < count; i++) {
    const owner_email = `flagger${++n}.${process.pid}.${Date.now()}@example.com`;
    const a = await svc.register({ owner_email });
    const sent = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`, { body: {} });
    expect(sent.status, sent.text).to.equal(200);
    const [mail] = await waitForMails(outbox, owner_email);
    const ok = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/verify`, { body: { otp: codeIn(mail) } });
    expect(ok.status, ok.text).to.equal(200);
    agents.push({ agent_id: a.agent_id, api_key: a.api_key, owner_email });
  }
  return agents;
}

/** The flag rule's age: a day and a minute. */
export const A_DAY_AND_A_BIT = 24 * 3600_000 + 60_000;
