import http from 'node:http';

// Kept-alive connections for the bench's own requests (piling holds for bookings, the soak).
// node:http rather than fetch: under load, undici's fetch failed now and then writing a body
// ("Request body length does not match content-length header").
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** POSTs `body` as JSON and parses the JSON answer; bounded by `timeoutMs`. */
export function postJson<T>(url: string, body: object, timeoutMs = 10_000): Promise<{ status: number; answer: T }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, answer: JSON.parse(Buffer.concat(chunks).toString('utf8')) as T });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
