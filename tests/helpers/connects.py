#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""connects.py LOG...: the addresses in strace logs (strace -f -e trace=connect,sendto,sendmsg -o LOG) that
leave the host. Allowed: AF_UNIX, AF_NETLINK, AF_UNSPEC, IPv4 127.0.0.0/8 and 0.0.0.0, IPv6 ::1, :: and
::ffff:127.0.0.0/104. Prints each other one with its line, and a summary; exit 0 when there is none, 1 when
there is, 2 when a log is missing or empty (strace without -qq writes at least how each process ended).
"""
import ipaddress
import re
import sys

FAMILY = re.compile(r"sa_family=(AF_\w+)")
INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
LOCAL_FAMILIES = {"AF_UNIX", "AF_LOCAL", "AF_NETLINK", "AF_UNSPEC"}


def local(family, text):
    """Whether the address after sa_family=family in text stays on this host; and the address as text."""
    if family in LOCAL_FAMILIES:
        return True, family
    if family == "AF_INET":
        m = INET.match(text)
        if not m:
            return False, "AF_INET (unparsed: %s)" % text[:80]
        a = ipaddress.IPv4Address(m.group(2))
        return a.is_loopback or a.is_unspecified, "%s:%s" % (a, m.group(1))
    if family == "AF_INET6":
        m = INET6.search(text)
        if not m:
            return False, "AF_INET6 (unparsed: %s)" % text[:80]
        a = ipaddress.IPv6Address(m.group(2))
        v4 = a.ipv4_mapped
        return (a.is_loopback or a.is_unspecified or (v4 is not None and v4.is_loopback)), \
            "[%s]:%s" % (a, m.group(1))
    return False, family


def main():
    bad, calls, seen = [], 0, {}
    for path in sys.argv[1:]:
        try:
            lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
        except OSError as e:
            print("%s: %s" % (path, e))
            return 2
        if not lines:
            print("%s: empty: did strace run?" % path)
            return 2
        for no, line in enumerate(lines, 1):
            if not re.search(r"\b(connect|sendto|sendmsg)\(", line):
                continue
            calls += 1
            for m in FAMILY.finditer(line):
                ok, addr = local(m.group(1), line[m.end() + 2:])
                seen[addr] = seen.get(addr, 0) + 1
                if not ok:
                    bad.append("%s:%d: %s" % (path, no, line.strip()[:300]))
    for b in bad:
        print("off the host: " + b)
    print("# %d calls; addresses: %s" % (calls, ", ".join("%s x%d" % kv for kv in sorted(seen.items())) or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
