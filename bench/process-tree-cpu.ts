import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/*
 * The CPU a server has used: utime + stime of its process and of every process below it, read
 * from /proc. A descendant that has exited and been waited for is in its parent's cutime +
 * cstime, so those are counted too: a child's CPU is in the sum before and after it exits.
 */

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

/**
 * The fields of a /proc stat file from field 3 (state) on, 0-based: ppid 1, utime 11, stime 12,
 * cutime 13, cstime 14; undefined once the process or thread has gone.
 */
function statFields(path: string): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined; // exited between the listing and the read
  }
  // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
  return text.slice(text.lastIndexOf(') ') + 2).split(' ');
}

function readStat(pid: number): ProcStat | undefined {
  const fields = statFields(`/proc/${pid}/stat`);
  if (fields === undefined) return undefined;
  const [ppid, utime, stime, cutime, cstime] = [1, 11, 12, 13, 14].map((i) => Number(fields[i]));
  return { pid, ppid: ppid!, ticks: utime! + stime! + cutime! + cstime! };
}

/**
 * CPU time so far of the process's main thread alone (its JavaScript, and the pauses V8 takes on
 * it), in microseconds; NaN once it is gone. The rest of a Node process's CPU is V8's own threads
 * (concurrent marking and sweeping, parallel scavenges, optimising compilation) and libuv's pool.
 */
export function mainThreadCpuMicros(pid: number): number {
  const fields = statFields(`/proc/${pid}/task/${pid}/stat`);
  if (fields === undefined) return Number.NaN;
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
}

/** CPU time of `rootPid` and all its descendants so far, in microseconds (0 once it is gone). */
export function processTreeCpuMicros(rootPid: number): number {
  const stats = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((stat): stat is ProcStat => stat !== undefined);
  const children = new Map<number, ProcStat[]>();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  let ticks = 0;
  const pending = stats.filter((stat) => stat.pid === rootPid);
  for (let stat = pending.pop(); stat !== undefined; stat = pending.pop()) {
    ticks += stat.ticks;
    pending.push(...(children.get(stat.pid) ?? []));
  }
  return (ticks * 1_000_000) / CLOCK_TICKS;
}
