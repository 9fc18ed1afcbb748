#!/usr/bin/env python3
"""Launches a distributed job as MXNet's tools/launch.py does, on Open MPI (docs/distributed.md).

    tools/launch.py -n 2 -s 2 --launcher local python3 train.py --kv-store dist_sync

starts 2 workers and 2 servers as the app contexts of one `mpirun`, each with MXNet's DMLC_*
variables (DMLC_ROLE, DMLC_NUM_WORKER, DMLC_NUM_SERVER, DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT) and
any --env, --env-worker or --env-server given. A server process serves from `import mxplug`
until the workers finish. The launcher ends with the job's exit code; Ctrl+C ends the whole job;
a process that dies ends the job, and the launcher names its role, rank and signal or exit code.
Installed as `mxplug-launch`.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

LAUNCHERS = ("local", "ssh", "mpi", "sge", "yarn")


def parse(argv):
    parser = argparse.ArgumentParser(
        prog=os.path.basename(sys.argv[0]),
        description="Launch a distributed job (MXNet's tools/launch.py, on Open MPI's mpirun).")
    parser.add_argument("-n", "--num-workers", required=True, type=int, help="number of worker processes")
    parser.add_argument("-s", "--num-servers", type=int,
                        help="number of server processes (default: as many as workers, as MXNet)")
    parser.add_argument("-H", "--hostfile", type=str,
                        help="the hosts to run on, one per line (mpirun's hostfile syntax: 'host slots=N' "
                             "is allowed); needed by the ssh and mpi launchers")
    parser.add_argument("--launcher", type=str, default="ssh", choices=LAUNCHERS,
                        help="local: every process on this machine; ssh and mpi: on the hosts of -H, "
                             "reached by mpirun (over ssh, or MXPLUG_LAUNCH_AGENT); sge and yarn are "
                             "not supported")
    parser.add_argument("--sync-dst-dir", type=str,
                        help="MXNet copied the current folder there on every host; not supported: "
                             "share the folder or copy it beforehand")
    parser.add_argument("--env-server", action="append", default=[],
                        help="NAME:VALUE (or NAME, taken from this environment) for the servers")
    parser.add_argument("--env-worker", action="append", default=[],
                        help="NAME:VALUE (or NAME) for the workers")
    parser.add_argument("--env", action="append", default=[], help="NAME:VALUE (or NAME) for every process")
    parser.add_argument("-i", "--interface", type=str,
                        help="network interface for the job's traffic (Open MPI's btl_tcp_if_include)")
    parser.add_argument("-p", "--port", type=int, default=9091,
                        help="DMLC_PS_ROOT_PORT, set for scripts that read it (MPI needs no port)")
    parser.add_argument("command", nargs="+", help="the command every process runs")
    args, unknown = parser.parse_known_args(argv)
    args.command += unknown
    if args.num_servers is None:
        args.num_servers = args.num_workers
    if args.num_workers < 1 or args.num_servers < 0:
        parser.error("-n must be at least 1 and -s at least 0 (got -n %d -s %d)" % (args.num_workers, args.num_servers))
    if args.launcher in ("sge", "yarn"):
        parser.error("--launcher %s is not supported: mxplug starts jobs through mpirun (local, ssh, mpi)" % args.launcher)
    if args.launcher in ("ssh", "mpi") and not args.hostfile:
        parser.error("--launcher %s needs -H HOSTFILE (the hosts to run on); --launcher local runs every "
                     "process on this machine" % args.launcher)
    if args.sync_dst_dir:
        parser.error("--sync-dst-dir is not supported: the command must find its files on every host")
    return args


def env_pairs(items, option):
    """'NAME:VALUE' or 'NAME' (this environment's value) -> [(NAME, VALUE)]."""
    pairs = []
    for item in items:
        name, sep, value = item.partition(":")
        if not name or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            sys.exit("%s %r: expected NAME:VALUE or NAME" % (option, item))
        if not sep:
            if name not in os.environ:
                sys.exit("%s %s: %s is not set in this environment (give NAME:VALUE)" % (option, item, name))
            value = os.environ[name]
        pairs.append((name, value))
    return pairs


def root_host(args):
    if args.launcher == "local":
        return "127.0.0.1"
    with open(args.hostfile) as f:
        for line in f:
            host = line.split("#")[0].split()
            if host:
                return host[0]
    sys.exit("hostfile %s names no host" % args.hostfile)


def mpirun_command(args):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit("mpirun not found: install Open MPI (Debian: openmpi-bin), or put it on PATH")
    common = [("DMLC_NUM_WORKER", str(args.num_workers)), ("DMLC_NUM_SERVER", str(args.num_servers)),
              ("DMLC_PS_ROOT_URI", root_host(args)), ("DMLC_PS_ROOT_PORT", str(args.port))]
    common += env_pairs(args.env, "--env")
    # What the processes need of this environment to find the same Python and mxplug.
    forwarded = [name for name in ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "MXPLUG_PLUGIN_PATH",
                                   "MXPLUG_KVSTORE_TIMEOUT", "MXPLUG_CACHE_DIR", "OMP_NUM_THREADS")
                 if name in os.environ]
    cmd = [mpirun]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")  # containers run as root; mpirun refuses it otherwise
    if args.launcher == "local":
        cmd += ["--oversubscribe", "--host", "localhost:%d" % (args.num_workers + args.num_servers)]
    else:
        cmd += ["--hostfile", args.hostfile]
    agent = os.environ.get("MXPLUG_LAUNCH_AGENT")
    if agent:
        cmd += ["--mca", "plm_rsh_agent", agent]
    if args.interface:
        cmd += ["--mca", "btl_tcp_if_include", args.interface, "--mca", "oob_tcp_if_include", args.interface]
    for name in forwarded:
        cmd += ["-x", name]

    def context(count, role, extra):
        part = ["-n", str(count)]
        for name, value in common + [("DMLC_ROLE", role)] + extra:
            part += ["-x", "%s=%s" % (name, value)]
        return part + list(args.command)

    cmd += context(args.num_workers, "worker", env_pairs(args.env_worker, "--env-worker"))
    if args.num_servers:
        cmd += [":"] + context(args.num_servers, "server", env_pairs(args.env_server, "--env-server"))
    return cmd


def role_of(rank, args):
    """World ranks: the workers first (first app context), then the servers."""
    if rank < args.num_workers:
        return "worker %d" % rank
    return "server %d" % (rank - args.num_workers)


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


class Watcher(object):
    """Passes mpirun's error output through and notes which process ended the job, and how."""
    SIGNAL = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)")
    # Two-line reports: the rank on one line, the code on a later one.
    RANK = [(re.compile(r"MPI_ABORT was invoked on rank (\d+)"), "ended the job through MPI_Abort"),
            (re.compile(r"Process name:\s*\[\[\d+,\d+\],(\d+)\]"), "exited")]
    CODE = re.compile(r"(?:Exit code:|with errorcode)\s*(\d+)")
    # Debian's Open MPI 4.1.4 fails to print MPI_Abort's help text and says this instead, and
    # counts the other processes' copies of it; the process that aborted has said why itself.
    NOISE = re.compile(r"ORTE_ERROR_LOG: .*show_help\.c|has sent help message help-mpi-api\.txt / mpi-abort"
                       r"|\"orte_base_help_aggregate\" to 0 to see all help")
    # What a process of ours says before it ends the job (kvstore/dist_job.cc, DistJob::Fail).
    OWN = re.compile(r"^mxplug kvstore: (?:worker|server) \d+ of \d+ \(process (\d+) of \d+\)")

    def __init__(self, stream, args):
        self.args = args
        self.verdict = None
        self._rank, self._how = None, ""
        self.failed_rank = None  # the process that said it ended the job
        self.thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self.thread.start()

    def _run(self, stream):
        for line in iter(stream.readline, ""):
            if not self.NOISE.search(line):
                sys.stderr.write(line)
                sys.stderr.flush()
            self._note(line)

    def _note(self, line):
        m = self.OWN.search(line)
        if m and self.failed_rank is None:
            self.failed_rank = int(m.group(1))
        if self.verdict:
            return
        m = self.SIGNAL.search(line)
        if m:
            rank = int(m.group(1))
            self.verdict = "%s (rank %d) was killed by %s" % (role_of(rank, self.args), rank,
                                                              signal_name(int(m.group(2))))
            return
        for pattern, how in self.RANK:
            m = pattern.search(line)
            if m:
                self._rank, self._how = int(m.group(1)), how
        m = self.CODE.search(line)
        if m and self._rank is not None:
            self.verdict = "%s (rank %d) %s with code %s" % (role_of(self._rank, self.args), self._rank,
                                                             self._how, m.group(1))


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    cmd = mpirun_command(args)
    # mpirun in its own process group: a Ctrl+C reaches it once, through us, and it ends the job.
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    watcher = Watcher(proc.stderr, args)

    def forward(signum, _frame):
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, forward)
    code = proc.wait()
    watcher.thread.join(timeout=5)
    if code != 0:
        name = os.path.basename(sys.argv[0])
        if code < 0:
            sys.stderr.write("%s: mpirun was killed by %s\n" % (name, signal_name(-code)))
            code = 128 - code
        elif watcher.verdict:
            sys.stderr.write("%s: the job failed: %s\n" % (name, watcher.verdict))
        elif watcher.failed_rank is not None:
            rank = watcher.failed_rank
            sys.stderr.write("%s: the job failed: %s (rank %d) ended it with code %d\n"
                             % (name, role_of(rank, args), rank, code))
        else:
            sys.stderr.write("%s: the job failed with exit code %d\n" % (name, code))
    return code


if __name__ == "__main__":
    sys.exit(main())
