import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../lib/env';

/** The little of Express 5 the ceilings use; express is a dependency of apps/api, not of the root. */
export interface MiniRequest {
  body: unknown;
  get(header: string): string | undefined;
}
export interface MiniResponse {
  status(code: number): MiniResponse;
  json(body: unknown): void;
}
type Handler = (req: MiniRequest, res: MiniResponse, next: (error?: unknown) => void) => unknown;
export interface MiniApp {
  disable(setting: string): void;
  use(handler: Handler): void;
  get(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
  listen(port: number, host: string, callback: () => void): unknown;
}
interface Express {
  (): MiniApp;
  json(): Handler;
}

/** Resolves a package the way apps/api does, so the ceilings run the very versions the API runs. */
export const requireAsApi = createRequire(path.join(ROOT, 'apps/api/package.json'));

export const express = requireAsApi('express') as Express;

export function listen(app: MiniApp): void {
  app.disable('x-powered-by');
  app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
  process.once('SIGTERM', () => process.exit(0));
}
