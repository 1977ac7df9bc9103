import type { Express } from 'express';

/** Placeholder until the conformance checker lands: returns the app unchanged. */
export function withResponseConformance(app: Express): Express {
  return app;
}
