import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Every outbound connection the service makes to an address a user chose goes through the guarded
// connect of workers/webhooks/http.ts (resolve, check every address, pin the socket to it). The
// only other outbound connection is the operator's SMTP relay (SMTP_URL). A new outbound call
// anywhere else (link previews, A2A push, federation) fails this test until it uses the guard.

const LAYERS = ['api', 'cli', 'commands', 'events', 'projections', 'queries', 'workers'];
const OUTBOUND = [
  /\bfetch\s*\(/,
  /\bhttps?\.(request|get)\s*\(/,
  /\bclient\.(request|get)\s*\(/,
  /\b(net|tls)\.(connect|createConnection)\s*\(/,
  /from 'undici'/,
  /\bnew\s+(WebSocket|EventSource)\s*\(/,
  /nodemailer\.createTransport\s*\(/,
  /\bdgram\b/,
];
const ALLOWED: Record<string, string> = {
  'workers/webhooks/http.ts': 'the guarded connect itself',
  'workers/humans/mail/transport.ts': "the operator's SMTP relay (configuration, not user input)",
  'cli/projections.ts': "the operator's own service, its admin API (--url / SERVICE_URL on the operator's command line, not user input)",

  'api/link-preview.ts': 'link previews: resolvePublicTarget on every hop, the socket pinned to the checked address',
  'api/routes/site/pages.ts': "the claim page's script: fetch runs in the visitor's browser, against this service",
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('outbound connections: only the guarded webhook connect reaches user-chosen addresses', () => {
  it('finds no outbound network call outside workers/webhooks/http.ts (and the SMTP transport)', () => {
    const found: string[] = [];
    for (const layer of LAYERS)
      for (const file of files(layer)) {
        const text = readFileSync(file, 'utf8');
        for (const re of OUTBOUND) if (re.test(text) && !(file in ALLOWED)) found.push(`${file}: ${String(re)}`);
      }
    expect(found).to.deep.equal([]);
  });

  it('fetches link previews only after resolvePublicTarget, with the socket pinned to the checked address', () => {
    const text = readFileSync('api/link-preview.ts', 'utf8');
    expect(text).to.match(/await resolvePublicTarget\(url, opts\.resolver, opts\.allowLoopback, \{ allowHttp: true \}\)/);
    expect(text).to.match(/lookup: pinned/);
    expect(text.indexOf('resolvePublicTarget(url')).to.be.lessThan(text.indexOf('await get(url, target'));
  });

  it('connects, in workers/webhooks/http.ts, only after resolvePublicTarget and with the socket pinned to the checked address', () => {
    const text = readFileSync('workers/webhooks/http.ts', 'utf8');
    const guard = text.indexOf('await resolvePublicTarget(');
    const connect = text.indexOf('client.request(');
    expect(guard).to.be.greaterThan(0);
    expect(connect).to.be.greaterThan(guard);
    expect(text).to.match(/lookup: pinned/);
    expect(text.match(/\.request\(/g)).to.have.length(1);
  });
});
