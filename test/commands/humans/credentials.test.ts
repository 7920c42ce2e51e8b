import { expect } from 'chai';
import { hashPassword, verifyPassword } from '../../../commands/humans/passwords.ts';
import { TokenService } from '../../../commands/humans/tokens.ts';

describe('humans: passwords and tokens', () => {
  it('hashes passwords with scrypt and a salt, verifying only the right one', async () => {
    const h1 = await hashPassword('correct horse');
    const h2 = await hashPassword('correct horse');
    expect(h1).to.match(/^scrypt\$15\$8\$1\$/);
    expect(h1).to.not.equal(h2);
    expect(await verifyPassword('correct horse', h1)).to.equal(true);
    expect(await verifyPassword('correct horsf', h1)).to.equal(false);
    expect(await verifyPassword('x', 'not-a-hash')).to.equal(false);
  });

  it('keeps access and refresh tokens apart and honours the injected clock', async () => {
    let now = new Date('2026-01-01T00:00:00.000Z');
    const t = new TokenService('server-secret-of-sufficient-length-0000', null, () => now);
    const access = await t.access({ userId: 'usr_1', sessionId: 'ses_1' });
    const refresh = await t.refresh({ userId: 'usr_1', sessionId: 'ses_1' });
    expect(await t.verifyAccess(access)).to.deep.equal({ userId: 'usr_1', sessionId: 'ses_1' });
    expect(await t.verifyAccess(refresh.token)).to.equal(null);
    expect(await t.verifyRefresh(access)).to.equal(null);
    expect((await t.verifyRefresh(refresh.token))?.jti).to.equal(refresh.jti);
    // A verified token is remembered; a changed signature is not the remembered token.
    const forged = `${access.slice(0, -2)}${access.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await t.verifyAccess(forged)).to.equal(null);
    // The remembered token still expires by the clock: valid 1 s before exp, refused at exp.
    now = new Date(now.getTime() + 15 * 60_000 - 1000);
    expect(await t.verifyAccess(access)).to.not.equal(null);
    now = new Date(now.getTime() + 1000);
    expect(await t.verifyAccess(access)).to.equal(null);
    now = new Date(now.getTime() + 1000);
    expect(await t.verifyAccess(access)).to.equal(null);
    expect(await t.verifyRefresh(refresh.token)).to.not.equal(null);
    now = new Date(now.getTime() + 7 * 24 * 3600_000);
    expect(await t.verifyRefresh(refresh.token)).to.equal(null);
    expect(await new TokenService('another-secret-of-sufficient-length-000', null, () => new Date('2026-01-01T00:00:00.000Z')).verifyAccess(access)).to.equal(
      null,
    );
  });
});
