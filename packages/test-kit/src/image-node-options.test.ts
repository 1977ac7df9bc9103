import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { imageNodeOptions } from './image-node-options';

describe('imageNodeOptions', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'image-node-options-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const dockerfile = (text: string) => writeFileSync(path.join(root, 'Dockerfile'), text);

  it('when there is no Dockerfile, or it sets no NODE_OPTIONS, then there are none', () => {
    expect(imageNodeOptions(root)).toBe('');
    dockerfile('FROM node:20-slim\nENV NPM_CONFIG_UPDATE_NOTIFIER=false\n');
    expect(imageNodeOptions(root)).toBe('');
  });

  it('when it sets them more than once, then the last line counts, in any case, as for Docker', () => {
    dockerfile(
      'FROM node:20-slim\r\n' +
        'ENV NODE_OPTIONS="--max-old-space-size=512"\r\n' +
        'env NODE_OPTIONS="--max-semi-space-size=64"\r\n',
    );
    expect(imageNodeOptions(root)).toBe('--max-semi-space-size=64');
  });

  it('when the line is in a form it cannot read, then it throws rather than dropping them', () => {
    dockerfile('FROM node:20-slim\nENV NODE_OPTIONS --max-semi-space-size=64\n');
    expect(() => imageNodeOptions(root)).toThrow(/cannot read ENV NODE_OPTIONS --max-semi-space-size=64/);
    dockerfile('FROM node:20-slim\nENV NODE_ENV=production NODE_OPTIONS="--max-semi-space-size=64"\n');
    expect(() => imageNodeOptions(root)).toThrow(/cannot read ENV NODE_ENV=production/);
  });

  it("reads this repository's own Dockerfile, which sizes V8's young generation", () => {
    expect(imageNodeOptions(path.resolve(__dirname, '../../..'))).toMatch(/--max-semi-space-size=\d+/);
  });
});
