/** One of an endpoint's places, held while its request is sent. */
export interface Place {
  /** Gives the place to the endpoint's next waiting job. Only the first call counts. */
  release(): void;
}

/** A job that would wait too long for a place: it should come back to the queue, due in `comeBackInMs`. */
export interface StepAside {
  comeBackInMs: number;
}

interface Endpoint {
  id: string;
  /** When each place now held was taken (performance.now()), oldest first. */
  sendingSince: number[];
  /** Jobs waiting for a place, first come first served. */
  waiting: Waiter[];
  /** How long a place of this endpoint is held, a moving average; undefined before the first release. */
  holdMs: number | undefined;
  /** When (performance.now()) the next job stepping aside should come back. */
  nextComeBack: number;
  /**
   * Since when (performance.now()) jobs of the endpoint have been stepping aside, with never a
   * horizon's shortest span (a minute) between two; and when the last one did.
   */
  backlogSince: number;
  lastStepAside: number;
}

/** A job waiting for a place: told when its place was taken, or to step aside, or null (closing). */
interface Waiter {
  answer(turn: number | StepAside | null): void;
  timer: NodeJS.Timeout;
}

/** A job steps aside rather than wait longer than this for a place in the process. */
const LONGEST_WAIT_MS = 1_000;
/**
 * The furthest ahead a job stepping aside is told to come back (its horizon): a minute, or half
 * the time the endpoint's jobs have been stepping aside, up to a quarter of an hour.
 */
const SHORTEST_HORIZON_MS = 60_000;
const LONGEST_HORIZON_MS = 15 * 60_000;
/** Idle endpoints whose pace is remembered; beyond this, an endpoint is forgotten as it goes idle. */
const REMEMBERED_ENDPOINTS = 10_000;
/** The weight of the newest hold in the moving average. */
const HOLD_WEIGHT = 0.2;
/** A hold counts at most this many times the average: one request stuck to its timeout is not the endpoint's pace. */
const LONGEST_HOLD_SAMPLE = 4;

export interface EndpointPlacesOptions {
  /** The clock, in ms (performance.now()). */
  now?: () => number;
  /** In [0, 1): spreads the jobs put off past their horizon. */
  random?: () => number;
}

/**
 * The requests one dispatcher process has in flight to each endpoint, at most `perEndpoint`
 * (WEBHOOK_ENDPOINT_CONCURRENCY) at a time: what one endpoint gets is bounded by the processes
 * times that, however many deliveries a process runs at once (WEBHOOK_CONCURRENCY). A job over
 * the bound waits in the process, in arrival order, for a place of its endpoint to come free.
 *
 * A waiting job holds one of the process's worker slots, so a slow endpoint's backlog would fill
 * them all and hold up every other endpoint. So no job waits longer than LONGEST_WAIT_MS: one
 * whose wait would be longer (from how long the endpoint's places are held and how many wait
 * before it) steps aside at once, and one still waiting then steps aside then: back to the queue,
 * due when the endpoint should have a place for it. Those stepping aside are spaced at the
 * endpoint's pace, so a backlog comes back about as fast as it can be sent, not all at once; a
 * line already behind the present starts from it. Past the horizon they are spread
 * over its second half instead, and the horizon grows with the time the endpoint's jobs have been
 * stepping aside, so a long backlog's jobs step aside a few times each time that time doubles,
 * not every minute, and come back within half that time of a recovery.
 */
export class EndpointPlaces {
  private readonly endpoints = new Map<string, Endpoint>();
  private closed = false;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly perEndpoint: number,
    { now = () => performance.now(), random = Math.random }: EndpointPlacesOptions = {},
  ) {
    this.now = now;
    this.random = random;
  }

  /**
   * A place to send to `endpointId`, once one is free; a StepAside when that would take too long;
   * null once closing, when the job should go back to the queue as it is.
   */
  async take(endpointId: string): Promise<Place | StepAside | null> {
    if (this.closed) return null;
    const now = this.now();
    let endpoint = this.endpoints.get(endpointId);
    if (!endpoint) {
      endpoint = {
        id: endpointId,
        sendingSince: [],
        waiting: [],
        holdMs: undefined,
        nextComeBack: 0,
        backlogSince: 0,
        lastStepAside: -Infinity,
      };
      this.endpoints.set(endpointId, endpoint);
    }
    if (endpoint.sendingSince.length < this.perEndpoint) return this.place(endpoint, this.taken(endpoint));
    const position = endpoint.waiting.length + 1;
    if (this.waitMs(endpoint, now, position) > LONGEST_WAIT_MS) return this.stepAside(endpoint, now, position);
    // A released place is taken for the next waiting job as it is released, so no later arrival
    // can take it first.
    const turn = await new Promise<number | StepAside | null>((answer) => {
      const waiter: Waiter = {
        answer,
        // Decided after the event loop's pending I/O: answers that came in while the process
        // was stalled release their places (maybe to this job) before it gives up waiting.
        timer: setTimeout(() => setImmediate(() => this.giveUp(endpoint, waiter)), LONGEST_WAIT_MS),
      };
      endpoint.waiting.push(waiter);
    });
    return typeof turn === 'number' ? this.place(endpoint, turn) : turn;
  }

  /** Jobs waiting for a place, all endpoints together. */
  waitingJobs(): number {
    let count = 0;
    for (const endpoint of this.endpoints.values()) count += endpoint.waiting.length;
    return count;
  }

  /**
   * Closing: every waiting job gets no place (its job goes back to the queue for another
   * process), and so does every later one. Places held are released as their requests end.
   */
  close(): void {
    this.closed = true;
    for (const endpoint of this.endpoints.values()) {
      for (const waiter of endpoint.waiting.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.answer(null);
      }
    }
  }

  /** Counts one more place of `endpoint` held, from now; returns when it was taken. */
  private taken(endpoint: Endpoint): number {
    const since = this.now();
    endpoint.sendingSince.push(since);
    return since;
  }

  private place(endpoint: Endpoint, since: number): Place {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.handOver(endpoint, since);
      },
    };
  }

  /** A waiter still waiting after LONGEST_WAIT_MS steps aside, due when its own turn should come. */
  private giveUp(endpoint: Endpoint, waiter: Waiter): void {
    const index = endpoint.waiting.indexOf(waiter);
    if (index === -1) return; // handed a place, or closing, meanwhile
    endpoint.waiting.splice(index, 1);
    waiter.answer(this.stepAside(endpoint, this.now(), index + 1));
  }

  /**
   * How long a place is held: the moving average, or longer when even the newest request in
   * flight has taken longer, so no place has come free since (an endpoint turning slow shows
   * there first, long before it answers). Not the oldest: one request stuck while the other places
   * come and go says nothing of the endpoint's pace.
   */
  private holdEstimate(endpoint: Endpoint, now: number): number {
    return Math.max(endpoint.holdMs ?? 0, now - endpoint.sendingSince[endpoint.sendingSince.length - 1]!);
  }

  /** How long the job `position` in line (1: next) would wait: its share of the places' holds. */
  private waitMs(endpoint: Endpoint, now: number, position: number): number {
    return (position / this.perEndpoint) * this.holdEstimate(endpoint, now);
  }

  /**
   * Come back when a place should be free for the job `position` in line, and not before the
   * jobs stepped aside before it, each a hold's share of the places later than the last; past the
   * horizon, somewhere in its second half.
   */
  private stepAside(endpoint: Endpoint, now: number, position: number): StepAside {
    // A job of a backlog that has lasted comes back later: its return and its next step aside
    // cost the queue and PostgreSQL, and the endpoint has shown no room for a while. Put off
    // jobs return within the horizon, so a backlog still there keeps stepping them aside.
    // A new backlog starts its line from the present: the jobs of an old one have come back.
    if (now - endpoint.lastStepAside > SHORTEST_HORIZON_MS) {
      endpoint.backlogSince = now;
      endpoint.nextComeBack = 0;
    }
    endpoint.lastStepAside = now;
    const horizon = Math.min(Math.max((now - endpoint.backlogSince) / 2, SHORTEST_HORIZON_MS), LONGEST_HORIZON_MS);
    const due = Math.max(now + this.waitMs(endpoint, now, position), endpoint.nextComeBack);
    if (due > now + horizon) return { comeBackInMs: Math.ceil(horizon * (0.5 + this.random() / 2)) };
    endpoint.nextComeBack = due + this.spacing(endpoint, now);
    return { comeBackInMs: Math.ceil(due - now) };
  }

  /**
   * How far apart jobs stepping aside are due: a hold's share of the places, the hold counted at
   * most four times the average. A stall of every place (all stuck to their timeout at once) makes
   * the jobs' own waits long, but must not push every later job of the backlog out by the stall.
   */
  private spacing(endpoint: Endpoint, now: number): number {
    const hold = this.holdEstimate(endpoint, now);
    const { holdMs } = endpoint;
    return (holdMs === undefined ? hold : Math.min(hold, LONGEST_HOLD_SAMPLE * holdMs)) / this.perEndpoint;
  }

  private handOver(endpoint: Endpoint, since: number): void {
    const held = this.now() - since;
    const { holdMs } = endpoint;
    endpoint.holdMs =
      holdMs === undefined ? held : holdMs + HOLD_WEIGHT * (Math.min(held, LONGEST_HOLD_SAMPLE * holdMs) - holdMs);
    endpoint.sendingSince.splice(endpoint.sendingSince.indexOf(since), 1);
    const next = endpoint.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      return next.answer(this.taken(endpoint));
    }
    if (endpoint.sendingSince.length === 0 && this.endpoints.size > REMEMBERED_ENDPOINTS) {
      this.endpoints.delete(endpoint.id);
    }
  }
}
