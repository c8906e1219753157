#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Stop every process in a network namespace a test helper made.

Usage: reap_netns.py PID

PID (the helper's shell, run by `unshare -n`) and this program are spared;
every other process in PID's network namespace gets SIGTERM, and SIGKILL
after 5 s if it is still there. A container's processes do not all die
with the command that started them (buildah run leaves its command's
children running when it is stopped): without this they would keep
running, in a namespace nobody can see, after the test. Refuses to act in
the network namespace of PID 1 (a helper run without its own namespace).
Standard library only.
"""

import os
import signal
import sys
import time


def netns(pid):
    try:
        return os.readlink("/proc/%s/ns/net" % pid)
    except OSError:
        return None


def members(ns, spare):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in spare and netns(d) == ns:
            try:
                with open("/proc/%s/stat" % d) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue  # a zombie: ended, its parent has not asked yet
            except (OSError, IndexError):
                continue
            out.append(int(d))
    return out


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: reap_netns.py PID", file=sys.stderr)
        return 2
    owner = int(sys.argv[1])
    ns = netns(owner)
    if ns is None or ns == netns(1):
        print("reap_netns: %d is not in a network namespace of its own; nothing done" % owner, file=sys.stderr)
        return 1
    spare = {owner, os.getpid()}
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 2)):
        pids = members(ns, spare)
        if not pids:
            return 0
        for p in pids:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        end = time.monotonic() + grace
        while time.monotonic() < end and members(ns, spare):
            time.sleep(0.05)
    return 0 if not members(ns, spare) else 1


if __name__ == "__main__":
    sys.exit(main())
