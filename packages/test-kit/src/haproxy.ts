import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { waitUntil } from './wait';
import { lastLinesOf } from './child-output';

/** An API replica behind the proxy: its name in HAProxy (and in X-Served-By) and its port. */
export interface Upstream {
  name: string;
  port: number;
}

/** One server's line of HAProxy's `show stat`, the columns the tests and the bench read. */
export interface ServerStat {
  name: string;
  /** UP, DOWN, MAINT, NOLB, or `UP 1/2` style while a check streak runs. */
  status: string;
  /** Requests sent to it (HTTP responses it answered, by class). */
  responses: { '2xx': number; '4xx': number; '5xx': number; other: number };
  /** Requests HAProxy retried, and requests it redispatched to another server, after a failure here. */
  retries: number;
  redispatches: number;
  /** Connection errors and response errors (aborted or unreadable answers) seen talking to it. */
  connectionErrors: number;
  responseErrors: number;
}

/**
 * HAProxy on 127.0.0.1 in front of API replicas, started and stopped by the test (or the bench),
 * from its own config in a temp dir: round robin, `option forwardfor`, health checks on
 * `/readyz`, retries of failed connections and empty answers on another server, and an
 * `X-Served-By` header naming the replica that answered. Only this process is ever stopped, by
 * its pid.
 */
export interface Haproxy {
  port: number;
  url: string;
  /** The backend's servers, from the admin socket. */
  stats(): Promise<ServerStat[]>;
  /** Resolves once every named server is in `status` (UP or DOWN) as the health checks see it. */
  waitFor(status: 'UP' | 'DOWN', names: string[], timeoutMs?: number): Promise<void>;
  /** The last lines HAProxy printed (alerts, warnings), for failure messages. */
  output: string[];
  stop(): Promise<void>;
}

export interface HaproxyOptions {
  upstreams: Upstream[];
  /** Health check interval; a server is DOWN after 2 failed checks and UP after 2 good ones. Default 500 ms. */
  checkIntervalMs?: number;
}

const BINARY_PLACES = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'];

/** The haproxy binary: on PATH, or where Debian puts it (/usr/sbin is not on every user's PATH). */
export function haproxyBinary(): string {
  if (spawnSync('haproxy', ['-v']).status === 0) return 'haproxy';
  const found = BINARY_PLACES.find((place) => existsSync(place));
  if (!found) throw new Error('haproxy is not installed: run scripts/ensure-test-tools.sh (Debian package haproxy)');
  return found;
}

/** The config: what an operator would write for the API, with test-sized check timings. */
export function haproxyConfig(options: HaproxyOptions & { port: number; adminSocket: string }): string {
  const inter = options.checkIntervalMs ?? 500;
  return [
    'global',
    '  maxconn 4096',
    `  stats socket ${options.adminSocket} mode 600 level admin`,
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-request 10s',
    '  timeout http-keep-alive 10s',
    '  timeout check 2s',
    // The API reads the client from the last X-Forwarded-For entry (TRUST_PROXY=1): this one.
    '  option forwardfor',
    // A connection refused or closed before any answer (a replica going away) is tried again on
    // another server. Safe for the API: it answers nothing it did not finish, and a hold or
    // booking sent with an Idempotency-Key is never done twice.
    '  retries 3',
    '  retry-on conn-failure',
    '  option redispatch 1',
    '',
    'frontend api',
    `  bind 127.0.0.1:${options.port}`,
    '  default_backend replicas',
    '',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  http-response set-header X-Served-By %[srv_name]',
    `  default-server check inter ${inter} fastinter ${Math.max(100, Math.floor(inter / 2))} fall 2 rise 2`,
    ...options.upstreams.map((u) => `  server ${u.name} 127.0.0.1:${u.port}`),
    '',
  ].join('\n');
}

/** Sends one command to the admin socket and returns the whole answer. */
function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const chunks: Buffer[] = [];
    socket.setTimeout(2_000, () => socket.destroy(new Error(`haproxy admin socket: no answer to ${command}`)));
    socket.once('connect', () => socket.end(`${command}\n`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(Buffer.concat(chunks).toString()));
  });
}

function parseStat(csv: string): ServerStat[] {
  const [header, ...lines] = csv.trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  const num = (row: string[], name: string) => Number(at(row, name)) || 0;
  return lines
    .map((line) => line.split(','))
    .filter((row) => at(row, 'pxname') === 'replicas' && !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
    .map((row) => ({
      name: at(row, 'svname'),
      status: at(row, 'status'),
      responses: {
        '2xx': num(row, 'hrsp_2xx'),
        '4xx': num(row, 'hrsp_4xx'),
        '5xx': num(row, 'hrsp_5xx'),
        other: num(row, 'hrsp_other'),
      },
      retries: num(row, 'wretr'),
      redispatches: num(row, 'wredis'),
      connectionErrors: num(row, 'econ'),
      responseErrors: num(row, 'eresp'),
    }));
}

const running = new Set<ChildProcess>();
// Should the test process go away first, take HAProxy with it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startHaproxy(options: HaproxyOptions): Promise<Haproxy> {
  const binary = haproxyBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'haproxy-'));
  const port = await freePort();
  const adminSocket = path.join(dir, 'admin.sock');
  const configFile = path.join(dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig({ ...options, port, adminSocket }));

  const child = spawn(binary, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const output = lastLinesOf(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  const stats = async () => parseStat(await adminCommand(adminSocket, 'show stat'));
  const stop = async () => {
    if (!gone()) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const waitFor = async (status: 'UP' | 'DOWN', names: string[], timeoutMs = 10_000) => {
    let last: ServerStat[] = [];
    await waitUntil(
      async () => {
        if (gone()) throw new Error(`haproxy exited:\n${output.join('\n')}`);
        last = await stats().catch(() => []);
        return names.every((name) => last.find((s) => s.name === name)?.status === status);
      },
      { timeoutMs, intervalMs: 50, what: () => `${names.join(', ')} to be ${status}: ${JSON.stringify(last)}` },
    );
  };

  try {
    await waitUntil(() => gone() || existsSync(adminSocket), { timeoutMs: 5_000, what: 'haproxy to start' });
    if (gone()) throw new Error(`haproxy exited at start:\n${output.join('\n')}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, url: `http://127.0.0.1:${port}`, stats, waitFor, output, stop };
}
