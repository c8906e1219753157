# SPDX-License-Identifier: MIT
"""A remote write 1.0 receiver for accel-remote-write's tests.

    rw_receiver.py --port N --dir DIR [--tls CERT KEY [--client-ca CA]]
                   [--bearer TOKEN | --basic USER:PASS] [--header NAME:VALUE]

Decodes each POST (snappy block format with Debian's python3-snappy, then the
prompb WriteRequest with the small protobuf reader below) and answers as
DIR/mode says at that moment (read at each request; "ok" when missing):

    ok          204
    500         500 (the samples are not kept)
    429:SECS    429 with Retry-After: SECS
    400once     400 for the next data request, then ok again

Writes, in DIR:
    accepted.jsonl  one {"s": series, "t": ts_ms, "v": value} per sample taken
    rejected.jsonl  the same for samples of a request answered 400
    metadata.jsonl  one {"name", "type", "help", "unit"} per metadata entry
    requests.log    "unix_time status nsamples nmetadata" per request (and the
                    uncompressed size of those taken)
    errors.log      protocol violations: a wrong header, labels not sorted or
                    repeated, a sample not newer than the last one taken for
                    its series (Prometheus would refuse it), bad encoding
    duplicates.log  samples equal (timestamp and value) to one already taken
                    for their series: a request sent again after its answer
                    was lost (the receiver killed mid-request); kept once, no
                    error (Prometheus would refuse those older than the
                    series' newest as out of order, and the sink would count
                    the request as failed though its samples are stored)
"""
import argparse
import json
import os
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import snappy


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    """(field number, wire type, value) of each field of a message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
            if len(v) != n:
                raise ValueError("length past the end")
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def decode(body):
    series, meta = [], []
    for f, wt, v in fields(body):
        if f == 1 and wt == 2:
            labels, samples = [], []
            for g, wt2, w in fields(v):
                if g == 1:
                    lab = {1: "", 2: ""}
                    for h, _, x in fields(w):
                        lab[h] = x.decode()
                    labels.append((lab[1], lab[2]))
                elif g == 2:
                    val, ts = 0.0, 0
                    for h, wt3, x in fields(w):
                        if h == 1 and wt3 == 1:
                            val = struct.unpack("<d", x)[0]
                        elif h == 2 and wt3 == 0:
                            ts = x - (1 << 64) if x >= 1 << 63 else x
                    samples.append((ts, val))
            series.append((labels, samples))
        elif f == 3 and wt == 2:
            m = {"type": 0, "name": "", "help": "", "unit": ""}
            for h, _, x in fields(v):
                if h == 1:
                    m["type"] = x
                elif h == 2:
                    m["name"] = x.decode()
                elif h == 4:
                    m["help"] = x.decode()
                elif h == 5:
                    m["unit"] = x.decode()
            meta.append(m)
    return series, meta


class State:
    lock = threading.Lock()
    last = {}  # series -> last timestamp taken
    seen = {}  # (series, timestamp) -> value, of every sample taken


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tls", nargs=2)
    ap.add_argument("--client-ca")
    ap.add_argument("--bearer")
    ap.add_argument("--basic")
    ap.add_argument("--header")
    a = ap.parse_args()
    d = a.dir

    def out(name, line):
        with open(os.path.join(d, name), "a") as f:
            f.write(line + "\n")

    def mode():
        try:
            with open(os.path.join(d, "mode")) as f:
                return f.read().strip() or "ok"
        except FileNotFoundError:
            return "ok"

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, code, body=b"", extra=()):
            self.send_response(code)
            for k, v in extra:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(n)
            if a.bearer and self.headers.get("Authorization") != "Bearer " + a.bearer:
                out("requests.log", "%f 401 0 0" % time.time())
                return self.answer(401, b"unauthorized\n")
            if a.basic:
                import base64
                want = "Basic " + base64.b64encode(a.basic.encode()).decode()
                if self.headers.get("Authorization") != want:
                    out("requests.log", "%f 401 0 0" % time.time())
                    return self.answer(401, b"unauthorized\n")
            if a.header:
                k, v = a.header.split(":", 1)
                if self.headers.get(k) != v.strip():
                    out("requests.log", "%f 403 0 0" % time.time())
                    return self.answer(403, b"missing header\n")
            for k, v in (("Content-Type", "application/x-protobuf"), ("Content-Encoding", "snappy"),
                         ("X-Prometheus-Remote-Write-Version", "0.1.0")):
                if self.headers.get(k) != v:
                    out("errors.log", "header %s: %r" % (k, self.headers.get(k)))
            try:
                body = snappy.uncompress(raw)
                series, meta = decode(body)
            except Exception as e:  # noqa: BLE001 - any decoding failure is the sender's
                out("errors.log", "cannot decode: %r" % e)
                return self.answer(400, b"cannot decode\n")
            ns = sum(len(s) for _, s in series)
            m = mode()
            with State.lock:
                if m == "400once" and ns:
                    with open(os.path.join(d, "mode"), "w") as f:
                        f.write("ok\n")
                    for labels, samples in series:
                        key = "{" + ",".join("%s=%s" % lv for lv in labels) + "}"
                        for t, v in samples:
                            out("rejected.jsonl", json.dumps({"s": key, "t": t, "v": v}))
                    out("requests.log", "%f 400 %d %d" % (time.time(), ns, len(meta)))
                    return self.answer(400, b"bad data: a test's 400\n")
                if m == "500":
                    out("requests.log", "%f 500 %d %d" % (time.time(), ns, len(meta)))
                    return self.answer(500, b"down for a test\n")
                if m.startswith("429:"):
                    out("requests.log", "%f 429 %d %d" % (time.time(), ns, len(meta)))
                    return self.answer(429, b"slow down\n", [("Retry-After", m[4:])])
                taken, dups = [], []
                for labels, samples in series:
                    names = [l for l, _ in labels]
                    if names != sorted(names) or len(set(names)) != len(names):
                        out("errors.log", "labels not sorted or repeated: %r" % labels)
                    if any(v == "" for _, v in labels):
                        out("errors.log", "an empty label value: %r" % labels)
                    key = "{" + ",".join("%s=%s" % lv for lv in labels) + "}"
                    for t, v in samples:
                        held = State.seen.get((key, t))
                        if held is not None and (held == v or (v != v and held != held)):
                            # A sample already taken (its request taken, the answer lost, sent again):
                            # kept once, no error.
                            dups.append("%s %d" % (key, t))
                            continue
                        if t <= State.last.get(key, -1 << 63):
                            out("errors.log", "not newer than the last sample: %s %d" % (key, t))
                            continue
                        State.last[key] = t
                        State.seen[(key, t)] = v
                        taken.append(json.dumps({"s": key, "t": t, "v": v if v == v else "NaN"}))
                # One write per request: a receiver killed mid-request keeps all of it or none.
                if taken:
                    out("accepted.jsonl", "\n".join(taken))
                if dups:
                    out("duplicates.log", "\n".join(dups))
                for x in meta:
                    out("metadata.jsonl", json.dumps(x))
                out("requests.log", "%f 204 %d %d %d" % (time.time(), ns, len(meta), len(body)))
            return self.answer(204)

    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), H)
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        if a.client_ca:
            ctx.load_verify_locations(a.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    # The previous samples of each series, when restarted on the same DIR (a receiver outage).
    try:
        with open(os.path.join(d, "accepted.jsonl")) as f:
            for line in f:
                x = json.loads(line)
                State.seen[(x["s"], x["t"])] = float("nan") if x["v"] == "NaN" else x["v"]
                State.last[x["s"]] = max(State.last.get(x["s"], -1 << 63), x["t"])
    except FileNotFoundError:
        pass
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
