/** One of an endpoint's places, held while its request is sent. */
export interface Place {
  /** How long the job waited for it, in milliseconds. */
  waitedMs: number;
  /** Gives the place to the endpoint's next waiting job. Only the first call counts. */
  release(): void;
}

interface Endpoint {
  sending: number;
  /** Jobs waiting for a place, first come first served; `false` tells one there is none (closing). */
  waiting: ((place: boolean) => void)[];
}

/**
 * The requests one dispatcher process has in flight to each endpoint, at most `perEndpoint`
 * (WEBHOOK_ENDPOINT_CONCURRENCY) at a time: what one endpoint gets is bounded by the processes
 * times that, however many deliveries a process runs at once (WEBHOOK_CONCURRENCY). A job over
 * the bound waits in the process, in arrival order, for a place of its endpoint to come free.
 */
export class EndpointPlaces {
  private readonly endpoints = new Map<string, Endpoint>();
  private closed = false;

  constructor(private readonly perEndpoint: number) {}

  /** A place to send to `endpointId`, once one is free; null once closing, when the job should step aside. */
  async take(endpointId: string): Promise<Place | null> {
    if (this.closed) return null;
    const started = performance.now();
    let endpoint = this.endpoints.get(endpointId);
    if (!endpoint) {
      endpoint = { sending: 0, waiting: [] };
      this.endpoints.set(endpointId, endpoint);
    }
    if (endpoint.sending < this.perEndpoint) endpoint.sending += 1;
    // A released place is handed over as it is (sending stays the same), so no later arrival
    // can take it first.
    else if (!(await new Promise<boolean>((resolve) => endpoint.waiting.push(resolve)))) return null;
    let released = false;
    return {
      waitedMs: performance.now() - started,
      release: () => {
        if (released) return;
        released = true;
        this.handOver(endpointId, endpoint);
      },
    };
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
      for (const waiter of endpoint.waiting.splice(0)) waiter(false);
    }
  }

  private handOver(endpointId: string, endpoint: Endpoint): void {
    const next = endpoint.waiting.shift();
    if (next) return next(true);
    endpoint.sending -= 1;
    if (endpoint.sending === 0) this.endpoints.delete(endpointId);
  }
}
