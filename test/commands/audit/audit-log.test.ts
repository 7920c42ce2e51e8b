import { expect } from 'chai';
import type { AuditAction } from '../../../commands/audit/audit-log.ts';
import { AUDIT_EVENT_TYPES, auditEntry } from '../../../commands/audit/audit-log.ts';
import type { RecordedEvent } from '../../../events/store/port.ts';
import * as events from '../../fixtures/events.ts';

const builderOf = (type: string) =>
  (events as unknown as Record<string, (over?: object) => { type: string; data: unknown }>)[type[0].toLowerCase() + type.slice(1)];
const recorded = (e: { type: string; data: unknown }, position = 7): RecordedEvent => ({
  id: '00000000-0000-4000-8000-000000000000',
  type: e.type,
  data: e.data,
  metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: '2026-03-10T12:00:00.000Z', schema_version: 1 },
  stream: 's-1',
  revision: 0,
  position,
});

describe('commands: the admin audit log lines (commands/audit/audit-log.ts)', () => {
  it('turns every audited event type into a line with its time, actor, role and target', () => {
    for (const type of AUDIT_EVENT_TYPES) {
      const build = builderOf(type);
      expect(build, type).to.be.a('function');
      const line = auditEntry(recorded(build()));
      expect(line, type).to.not.equal(null);
      expect(line?.action).to.equal(type satisfies AuditAction);
      expect(line?.at, type).to.match(/^\d{4}-\d{2}-\d{2}T/);
      expect(line?.actor, type).to.be.a('string').and.not.equal('');
      expect(line?.target, type).to.be.a('string').and.not.equal('');
      expect(line?.position).to.equal(7);
    }
  });

  it('names community admins, super admins and operators by role, and the console room actions by their user', () => {
    expect(auditEntry(recorded(events.circleContentModerated()))).to.include({ role: 'community_admin', detail: 'hide', note: 'Off topic' });
    expect(auditEntry(recorded(events.agentBanned()))).to.include({ role: 'super_admin' });
    expect(auditEntry(recorded(events.roomHidden({ by: 'cli:operator' })))).to.include({ role: 'operator', actor: 'cli:operator' });
    expect(auditEntry(recorded(events.roomHidden({ by: 'admin:usr_admin000000000000000' })))).to.include({
      role: 'super_admin',
      actor: 'usr_admin000000000000000',
    });
    expect(auditEntry(recorded(events.moderationDecided({ appeal: true })))).to.include({ detail: 'restore (appeal)', target: `post:${events.POST}` });
  });

  it('leaves every other event type out', () => {
    expect(auditEntry(recorded(events.postFlagged()))).to.equal(null);
    expect(auditEntry(recorded(events.moderationAppealed()))).to.equal(null);
  });
});
