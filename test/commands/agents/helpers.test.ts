import { expect } from 'chai';
import { isDisposableDomain, normaliseEmail } from '../../../commands/agents/email.ts';
import { SecretBox } from '../../../commands/agents/secrets.ts';
import { checkWebhookUrl, isPublicAddress } from '../../../commands/agents/webhook-url.ts';
import { normaliseCapability } from '../../../events/capabilities.ts';
import { extractHashtags } from '../../../events/feed.ts';

describe('agents: registration rules', () => {
  it('normalises owner e-mails: case, +tags everywhere, dots for Gmail-style providers', () => {
    expect(normaliseEmail(' Jane.Doe+news@GMail.com ')).to.equal('janedoe@gmail.com');
    expect(normaliseEmail('jane.doe@googlemail.com')).to.equal('janedoe@gmail.com');
    expect(normaliseEmail('jane.doe+x@example.com')).to.equal('jane.doe@example.com');
  });

  it('recognises disposable domains from the maintained list', () => {
    expect(isDisposableDomain('a@mailinator.com')).to.equal(true);
    expect(isDisposableDomain('a@example.com')).to.equal(false);
  });

  it('normalises capability slugs', () => {
    expect(normaliseCapability('  Lead Gen ')).to.equal('lead-gen');
    expect(normaliseCapability('B2B_Sales')).to.equal('b2b-sales');
    expect(normaliseCapability('Café--Ops!')).to.equal('cafe-ops');
  });

  it('extracts hashtags from a body, lower-cased and de-duplicated', () => {
    expect(extractHashtags('Raised #SeedRound with #AI and #ai, see https://x.y/#anchor')).to.deep.equal(['seedround', 'ai']);
  });
});

describe('agents: secrets at rest', () => {
  const box = new SecretBox('a-server-secret-of-sufficient-length-000');

  it('hashes with a server key and verifies in constant time', () => {
    const h = box.hash('ans_live_abc');
    expect(h).to.match(/^[0-9a-f]{64}$/);
    expect(box.verify('ans_live_abc', h)).to.equal(true);
    expect(box.verify('ans_live_abd', h)).to.equal(false);
    expect(new SecretBox('another-server-secret-of-sufficient-len').hash('ans_live_abc')).to.not.equal(h);
  });

  it('encrypts webhook secrets reversibly and detects tampering', () => {
    const sealed = box.encrypt('whsec_123');
    expect(sealed).to.not.contain('whsec_123');
    expect(box.decrypt(sealed)).to.equal('whsec_123');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.decrypt(tampered)).to.throw();
  });
});

describe('agents: webhook URL check', () => {
  it('refuses http, credentials, localhost and non-public literal addresses', () => {
    expect(checkWebhookUrl('http://example.com/h')).to.match(/https/);
    expect(checkWebhookUrl('https://user:pw@example.com/h')).to.match(/credentials/);
    expect(checkWebhookUrl('https://localhost/h')).to.match(/public/);
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '192.168.1.1',
      '172.20.0.1',
      '169.254.169.254',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[fe80::1]',
      '[fd00::1]',
      '0.0.0.0',
    ]) {
      expect(checkWebhookUrl(`https://${host}/h`), host).to.not.equal(null);
    }
    expect(checkWebhookUrl('https://hooks.example.com/h')).to.equal(null);
  });

  it('classifies public addresses', () => {
    expect(isPublicAddress('8.8.8.8')).to.equal(true);
    expect(isPublicAddress('2606:4700::1111')).to.equal(true);
    expect(isPublicAddress('100.64.0.1')).to.equal(false);
    expect(isPublicAddress('::ffff:10.0.0.1')).to.equal(false);
  });

  it('refuses what the hand-written table let through (6to4 and Teredo whatever they embed, documentation, benchmarking) and accepts 192.0.3.1', () => {
    for (const a of [
      '2002:7f00:1::1',
      '2002:a00:1::1',
      '2002:808:808::1',
      '2001:0::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '198.51.100.1',
      '203.0.113.9',
      '198.18.0.1',
      '198.19.1.1',
    ])
      expect(isPublicAddress(a), a).to.equal(false);
    for (const a of ['64:ff9b::7f00:1', '64:ff9b::8.8.8.8', '64:ff9b:1::1', '::8.8.8.8', '::ffff:0:8.8.8.8', '2001:db8::1', '3fff::1', 'fe80::1%eth0'])
      expect(isPublicAddress(a), a).to.equal(false);
    expect(isPublicAddress('192.0.3.1')).to.equal(true);
    expect(isPublicAddress('::ffff:8.8.8.8')).to.equal(true);
  });

  it('refuses local names by their form, a trailing dot ignored (localhost., vm, vm.)', () => {
    for (const host of ['localhost.', 'vm', 'vm.', 'LOCALHOST', 'a.home.arpa', 'x.localdomain'])
      expect(checkWebhookUrl(`https://${host}/h`), host).to.not.equal(null);
    expect(checkWebhookUrl('https://hooks.example.com./h')).to.equal(null);
  });
});
