#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake metrics endpoint for endpoint-runtime tests: an HTTP(S) server on
127.0.0.1 (a free port, written to --port-file) whose paths are the faults
a scrape must survive:

  /metrics    the --file as it is now (text/plain; version=0.0.4)
  /gzip       the same, gzip-encoded when the request accepts gzip
  /hang       reads the request, never answers (until the server stops)
  /slow       answers after --delay seconds
  /midbody    announces Content-Length 100000, sends 100 bytes, closes
  /big        a 10 MB body
  /404        HTTP 404
  /garbage    a body that is no exposition at all
  /bearer     the file only with "Authorization: Bearer <--bearer-file's content, read now>" (or, for 2 s after
              the file changed, its former content: logged auth=old), else 401
  /basic      the file only with basic auth --basic-user and --basic-password-file's content, else 401

--tls-cert/--tls-key serve HTTPS; --client-ca also asks for a client
certificate signed by it. Each request is logged to --log (one line:
"PATH gzip=0|1 auth=ok|bad|none peer=PORT"), so a test can tell what was
asked and over which connection. Python's standard library only.
"""
import argparse
import base64
import gzip
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time

STOP = threading.Event()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--file", required=True, help="the exposition served by /metrics")
    p.add_argument("--port-file", required=True)
    p.add_argument("--port", type=int, default=0, help="listen on this port (default: a free one)")
    p.add_argument("--log", help="append one line per request")
    p.add_argument("--delay", type=float, default=3.0, help="/slow's delay (seconds)")
    p.add_argument("--bearer-file")
    p.add_argument("--basic-user")
    p.add_argument("--basic-password-file")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--client-ca")
    return p.parse_args()


ARGS = None
LOG_LOCK = threading.Lock()


def log(line):
    if ARGS.log:
        with LOG_LOCK, open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


# --bearer-file's token as last read, the one before it and when it changed: the one before stays valid for
# TOKEN_GRACE seconds, as a token issuer keeps a rotated token valid until it expires (a client that read the file
# just before it changed is not refused).
TOKEN = {"cur": None, "prev": None, "changed": 0.0}
TOKEN_LOCK = threading.Lock()
TOKEN_GRACE = 2.0


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers

    def log_message(self, fmt, *args):  # no stderr chatter
        pass

    def send_body(self, body, code=200, headers=()):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def auth(self):
        got = self.headers.get("Authorization")
        if self.path == "/bearer":
            cur = read(ARGS.bearer_file).decode().strip()
            with TOKEN_LOCK:
                if cur != TOKEN["cur"]:
                    TOKEN.update(prev=TOKEN["cur"], cur=cur, changed=time.monotonic())
                prev, changed = TOKEN["prev"], TOKEN["changed"]
            if prev and got == "Bearer " + prev and got != "Bearer " + cur and time.monotonic() - changed < TOKEN_GRACE:
                return "old"  # taken: an issuer keeps a rotated token valid for a while
            want = "Bearer " + cur
        elif self.path == "/basic":
            pw = read(ARGS.basic_password_file).decode().strip()
            want = "Basic " + base64.b64encode(("%s:%s" % (ARGS.basic_user, pw)).encode()).decode()
        else:
            return "none" if got is None else "given"
        return "ok" if got == want else "bad"

    def do_GET(self):
        gz = "gzip" in (self.headers.get("Accept-Encoding") or "")
        auth = self.auth()
        log("%s gzip=%d auth=%s peer=%d" % (self.path, gz, auth, self.client_address[1]))
        path = self.path
        if path in ("/metrics", "/bearer", "/basic"):
            if auth == "bad":
                return self.send_body(b"unauthorized\n", 401)
            return self.send_body(read(ARGS.file))
        if path == "/gzip":
            body = read(ARGS.file)
            if gz:
                return self.send_body(gzip.compress(body), headers=[("Content-Encoding", "gzip")])
            return self.send_body(body)
        if path == "/hang":
            STOP.wait()
            return None
        if path == "/slow":
            if STOP.wait(ARGS.delay):
                return None
            return self.send_body(read(ARGS.file))
        if path == "/midbody":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"# TYPE x counter\n" + b"x_total 1\n" * 8 + b"x_tot")
            self.wfile.flush()
            self.close_connection = True
            return None
        if path == "/big":
            line = b"big_series_total{a=\"0123456789012345678901234567890123456789\"} 1\n"
            return self.send_body(line * (10_000_000 // len(line) + 1))
        if path == "/garbage":
            return self.send_body(b"\x00\x01\x02 this {{{ is not an exposition\n}}} at all\n")
        return self.send_body(b"not found\n", 404)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # every runtime of a test connects at once

    def handle_error(self, request, client_address):  # a client that went away (the point of most paths)
        pass


def main():
    global ARGS
    ARGS = parse_args()
    srv = Server(("127.0.0.1", ARGS.port), Handler)
    if ARGS.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls_cert, ARGS.tls_key)
        if ARGS.client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(ARGS.client_ca)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        STOP.set()


if __name__ == "__main__":
    sys.exit(main())
