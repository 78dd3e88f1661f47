import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Connection } from 'mysql2/promise';

// CPU of a measured part: this process's (process.cpuUsage(): every thread of it) and the
// database server's, utime + stime from /proc/<pid>/stat read before and after. The server is
// found from its own @@pid_file (the same machine), else `pidof mariadbd`, else the CI pid file;
// on another machine (or when /proc cannot be read) its share is unknown.

let tickMs = 10;
try {
  tickMs = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
} catch {
  // 100 Hz, Linux's usual
}

export function procCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) in parentheses: utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * tickMs;
}

export async function databasePid(admin: Connection): Promise<number | undefined> {
  const candidates: string[] = [];
  if (process.env.BENCH_MARIADB_PID) return Number(process.env.BENCH_MARIADB_PID);
  try {
    const [rows] = (await admin.query('SELECT @@pid_file AS f')) as unknown as [Array<{ f: string }>];
    if (rows[0]?.f) candidates.push(rows[0].f);
  } catch {
    // not MariaDB/MySQL with a pid file
  }
  candidates.push('/tmp/ci-mariadb/mariadbd.pid');
  for (const file of candidates) {
    try {
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (pid > 0 && /mariadbd|mysqld/.test(fs.readFileSync(`/proc/${pid}/comm`, 'utf8'))) return pid;
    } catch {
      // not here
    }
  }
  try {
    const pids = execFileSync('pidof', ['mariadbd'], { encoding: 'utf8' }).trim().split(/\s+/).map(Number);
    if (pids.length === 1) return pids[0];
  } catch {
    // none
  }
  return undefined;
}

export interface CpuSpan {
  // ms of CPU over the span
  nodeMs: number;
  // NaN when the database's process is not known
  dbMs: number;
  // other processes (engine workers), summed
  othersMs: number;
}

// Starts a span; its end() answers the CPU spent since. `others`: pids of child processes doing
// the work (their own CPU; this process's then counts only the driver).
export function cpuSpan(dbPid: number | undefined, others: readonly number[] = []): { end(): CpuSpan } {
  const node = process.cpuUsage();
  const db = dbPid === undefined ? NaN : procCpuMs(dbPid);
  const before = others.map((pid) => procCpuMs(pid));
  return {
    end() {
      const used = process.cpuUsage(node);
      return {
        nodeMs: (used.user + used.system) / 1000,
        dbMs: dbPid === undefined ? NaN : procCpuMs(dbPid) - db,
        othersMs: others.reduce((sum, pid, i) => sum + procCpuMs(pid) - before[i]!, 0),
      };
    },
  };
}
