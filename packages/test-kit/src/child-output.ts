import type { ChildProcess } from 'node:child_process';

/** The last `max` lines a child printed (stdout and stderr), each cut to 400 characters, for failure messages. */
export function lastLinesOf(child: ChildProcess, max = 20): string[] {
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      output.push(line.slice(0, 400));
      if (output.length > max) output.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return output;
}
