// Preloaded (NODE_OPTIONS=--require) into a relay process whose clock must run CLOCK_AHEAD_MS
// ahead of PostgreSQL's, as on a host whose clock drifted: Date.now() only.
'use strict';

const ahead = Number(process.env.CLOCK_AHEAD_MS ?? '0');
const realNow = Date.now;
Date.now = () => realNow() + ahead;
