#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The suite's last check (tests/helpers/run_suite.sh): no process a test
started is still running.

Usage: leftovers.py MARK [PID...]

Every process whose environment holds ACCEL_SUITE=MARK (run_suite.sh sets
it for the tests; every process a test starts inherits it, and the helpers
that start programs with a clean environment, in a container or a chroot,
pass it on) is one the suite started, but the PIDs given (the runner
itself). Processes that are just ending get 5 s to go; what is left then is
listed (pid, name, network namespace, command line), stopped with SIGTERM,
then SIGKILL, and the exit status is 1. Standard library only; reading other
users' environments needs root, as the suite has (a process whose
environment cannot be read is not counted).
"""

import os
import signal
import sys
import time


def marked(mark, spare):
    """{pid: (name, netns, cmdline)} of the processes carrying the mark."""
    want = b"ACCEL_SUITE=" + mark.encode()
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in spare:
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/comm" % d) as f:
                name = f.read().strip()
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            try:
                ns = os.readlink("/proc/%s/ns/net" % d)
            except OSError:
                ns = "?"
        except OSError:
            continue  # gone, or not ours to read
        found[int(d)] = (name, ns, cmd)
    return found


def main():
    if len(sys.argv) < 2 or not sys.argv[1]:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mark = sys.argv[1]
    spare = {os.getpid(), os.getppid()} | {int(p) for p in sys.argv[2:]}
    deadline = time.monotonic() + 5
    left = marked(mark, spare)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = marked(mark, spare)
    if not left:
        print("# leftovers: no process of the suite is still running")
        return 0
    print("# leftovers: %d process(es) the tests started are still running:" % len(left))
    for pid, (name, ns, cmd) in sorted(left.items()):
        print("#   %d %s (%s): %s" % (pid, name, ns, cmd[:300]))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        end = time.monotonic() + 3
        while time.monotonic() < end and marked(mark, spare):
            time.sleep(0.1)
        left = marked(mark, spare)
        if not left:
            break
    print("# leftovers: stopped them; the suite fails (a test must stop what it starts)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
