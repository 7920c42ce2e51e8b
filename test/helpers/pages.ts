import { expect } from 'chai';

/**
 * A page's script elements are only its own: `jsonLd` JSON-LD blocks and the site's files under
 * /assets (each empty, by src), nothing a user wrote opened another element. Answers the asset
 * file names.
 */
export function expectOwnScripts(html: string, jsonLd = 1, what = ''): string[] {
  const elements = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  expect(html.match(/<script/g) ?? [], `${what}: every <script opens one element`).to.have.length(elements.length);
  expect(html.match(/<\/script>/g) ?? [], `${what}: every </script> closes one element`).to.have.length(elements.length);
  const ld = elements.filter(([, attrs]) => attrs === ' type="application/ld+json"');
  expect(ld, `${what}: JSON-LD blocks`).to.have.length(jsonLd);
  const files = elements
    .filter(([, attrs]) => attrs !== ' type="application/ld+json"')
    .map(([, attrs, body]) => {
      const src = /^ src="\/assets\/([a-z-]+\.js)\?v=[\w-]+" defer$/.exec(attrs)?.[1];
      expect(src, `${what}: a script element that is not the site's own: <script${attrs}>`).to.be.a('string');
      expect(body, `${what}: an asset script element is empty`).to.equal('');
      return src as string;
    });
  return files;
}
