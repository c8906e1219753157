#!/usr/bin/python3
"""Fake EC2 Instance Metadata Service (IMDSv2) for tests. Stdlib only.

Usage:
  fake_imds.py --port-file /tmp/imds.port [--log /tmp/imds.log] [options]
  PORT=$(cat /tmp/imds.port)
  TOKEN=$(curl -s -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' \
          http://127.0.0.1:$PORT/latest/api/token)
  curl -s -H "X-aws-ec2-metadata-token: $TOKEN" \
          http://127.0.0.1:$PORT/latest/meta-data/instance-id

Options:
  --port-file F      bind 127.0.0.1 port 0; once listening write the port
                     (decimal + "\\n") to F atomically (tmp file + rename).
  --port N           bind this port instead of 0 (default 0).
  --log F            append "METHOD PATH STATUS" per request (flushed).
  --cred-ttl S       IAM credential lifetime in seconds (default 3600); a fetch
                     after expiry issues a new AccessKeyId (counter suffix).
  --token-max-ttl S  reject token TTLs above S (default 21600, as EC2).
  --set PATH=VALUE   override/add a value (repeatable). PATH may be
                     "instance-id", "meta-data/instance-id" or
                     "/latest/meta-data/instance-id".
  --missing PATH     make PATH (and everything below it) 404 (repeatable).
  --no-tags          tags/instance/* 404 (instance tags disabled; EC2 default).
  --hang S           sleep S seconds (float) before every response.
  --v1               token optional (IMDSv1 allowed). As on EC2 in "optional"
                     mode, a request that does carry a token still gets 401 if
                     the token is invalid/expired.

Semantics (like EC2):
  PUT /latest/api/token needs X-aws-ec2-metadata-token-ttl-seconds (integer
  1..21600) else 400; with X-Forwarded-For -> 403. Returns the token as body.
  GET needs X-aws-ec2-metadata-token = an unexpired issued token, else 401.
  Directories (with or without trailing "/") return a newline-separated
  listing, subdirectories suffixed "/". Unknown paths 404; other methods 405.
  SIGTERM/SIGINT: clean shutdown, exit 0. Silent except on real errors.
"""

import argparse
import datetime
import http.server
import json
import os
import secrets
import signal
import sys
import threading
import time

INSTANCE_ID = "i-0123456789abcdef0"
MAC = "0e:11:22:33:44:55"
ROLE = "test-role"
CRED_SENTINEL = object()  # leaf value: generate IAM credentials JSON
IDENTITY_SENTINEL = object()  # leaf value: instance identity document

DEFAULTS = {
    "meta-data/ami-id": "ami-0abcdef1234567890",
    "meta-data/ami-launch-index": "0",
    "meta-data/hostname": "ip-172-31-20-5.us-west-2.compute.internal",
    "meta-data/instance-id": INSTANCE_ID,
    "meta-data/instance-life-cycle": "on-demand",
    "meta-data/instance-type": "inf2.xlarge",
    "meta-data/local-hostname": "ip-172-31-20-5.us-west-2.compute.internal",
    "meta-data/local-ipv4": "172.31.20.5",
    "meta-data/mac": MAC,
    "meta-data/network/interfaces/macs/%s/device-number" % MAC: "0",
    "meta-data/network/interfaces/macs/%s/local-ipv4s" % MAC: "172.31.20.5",
    "meta-data/network/interfaces/macs/%s/mac" % MAC: MAC,
    "meta-data/network/interfaces/macs/%s/subnet-id" % MAC: "subnet-0123abcd",
    "meta-data/network/interfaces/macs/%s/vpc-id" % MAC: "vpc-0a1b2c3d",
    "meta-data/placement/availability-zone": "us-west-2b",
    "meta-data/placement/availability-zone-id": "usw2-az2",
    "meta-data/placement/region": "us-west-2",
    "meta-data/tags/instance/Name": "my-inference-node",
    "meta-data/iam/info": json.dumps({
        "Code": "Success",
        "LastUpdated": "2024-06-01T00:00:00Z",
        "InstanceProfileArn":
            "arn:aws:iam::123456789012:instance-profile/%s" % ROLE,
        "InstanceProfileId": "AIPAEXAMPLEPROFILEID0",
    }, indent=2),
    "meta-data/iam/security-credentials/" + ROLE: CRED_SENTINEL,
    "dynamic/instance-identity/document": IDENTITY_SENTINEL,
}


def norm_path(p):
    """User-supplied PATH -> key relative to /latest/ (no leading/trailing /)."""
    p = p.strip().strip("/")
    if p.startswith("latest/"):
        p = p[len("latest/"):]
    elif p == "latest":
        p = ""
    if not (p == "" or p.split("/")[0] in ("meta-data", "dynamic",
                                            "user-data", "api")):
        p = "meta-data/" + p
    return p


def iso(t):
    return datetime.datetime.fromtimestamp(
        int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.tokens = {}  # token -> expiry (time.monotonic())
        self.tree = dict(DEFAULTS)
        if args.no_tags:
            self._remove("meta-data/tags")
        for item in args.set or []:
            if "=" not in item:
                sys.exit("fake_imds: --set wants PATH=VALUE, got %r" % item)
            k, v = item.split("=", 1)
            self.tree[norm_path(k)] = v
        for m in args.missing or []:
            self._remove(norm_path(m))
        self.cred_n = 0
        self.cred = None  # (expires_at_epoch, json_text)
        self.logf = open(args.log, "a") if args.log else None

    def _remove(self, key):
        for k in list(self.tree):
            if k == key or k.startswith(key + "/"):
                del self.tree[k]

    def log(self, method, path, status):
        if not self.logf:
            return
        with self.lock:
            self.logf.write("%s %s %d\n" % (method, path, status))
            self.logf.flush()

    def new_token(self, ttl):
        tok = secrets.token_urlsafe(42)  # 56 chars, like EC2's tokens
        with self.lock:
            now = time.monotonic()
            self.tokens = {t: e for t, e in self.tokens.items() if e > now}
            self.tokens[tok] = now + ttl
        return tok

    def token_ok(self, tok):
        with self.lock:
            exp = self.tokens.get(tok)
            return exp is not None and exp > time.monotonic()

    def credentials(self):
        with self.lock:
            now = time.time()
            if self.cred is None or now >= self.cred[0]:
                self.cred_n += 1
                n = self.cred_n
                exp = int(now) + self.args.cred_ttl
                body = json.dumps({
                    "Code": "Success",
                    "LastUpdated": iso(now),
                    "Type": "AWS-HMAC",
                    "AccessKeyId": "ASIATESTKEY%09d" % n,
                    "SecretAccessKey": ("fakeSecretKey/%04d/" % n).ljust(
                        40, "x"),
                    "Token": "IQoJb3JpZ2luX2VjEFAKE%04d" % n
                             + "A" * 300 + "==",
                    "Expiration": iso(exp),
                }, indent=2)
                self.cred = (exp, body)
            return self.cred[1]

    def identity(self):
        t = self.tree

        def g(k, d=""):
            v = t.get("meta-data/" + k, d)
            return v if isinstance(v, str) else d
        return json.dumps({
            "accountId": "123456789012",
            "architecture": "x86_64",
            "availabilityZone": g("placement/availability-zone"),
            "billingProducts": None,
            "devpayProductCodes": None,
            "marketplaceProductCodes": None,
            "imageId": g("ami-id"),
            "instanceId": g("instance-id"),
            "instanceType": g("instance-type"),
            "kernelId": None,
            "pendingTime": "2024-06-01T00:00:00Z",
            "privateIp": g("local-ipv4"),
            "ramdiskId": None,
            "region": g("placement/region"),
            "version": "2017-09-30",
        }, indent=2)

    def lookup(self, key):
        """-> (status, body)"""
        if key in self.tree:
            v = self.tree[key]
            if v is CRED_SENTINEL:
                return 200, self.credentials()
            if v is IDENTITY_SENTINEL:
                return 200, self.identity()
            return 200, v
        prefix = key + "/" if key else ""
        children = []
        for k in self.tree:
            if k.startswith(prefix):
                rest = k[len(prefix):]
                if "/" in rest:
                    name = rest.split("/", 1)[0] + "/"
                else:
                    name = rest
                if name not in children:
                    children.append(name)
        if not children:
            return 404, None
        return 200, "\n".join(sorted(children))


NOT_FOUND = """<?xml version="1.0" encoding="iso-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
\t"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title>404 - Not Found</title>
 </head>
 <body>
  <h1>404 - Not Found</h1>
 </body>
</html>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "EC2ws"
    sys_version = ""
    state = None  # set in main

    def log_message(self, fmt, *args):  # quiet
        pass

    def _drain_body(self):
        n = self.headers.get("Content-Length")
        if n:
            try:
                self.rfile.read(int(n))
            except (ValueError, OSError):
                pass

    def _reply(self, status, body=None, extra=None):
        st = self.state
        if st.args.hang > 0:
            time.sleep(st.args.hang)
        if body is None:
            body = NOT_FOUND if status == 404 else ""
        data = body.encode()
        path = self.path.split("?", 1)[0]
        st.log(self.command, path, status)
        try:
            self.send_response(status)
            ctype = "text/html" if status == 404 else "text/plain"
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_PUT(self):
        self._drain_body()
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") != "/latest/api/token":
            return self._reply(405 if path.startswith("/latest/") else 404)
        if "X-Forwarded-For" in self.headers:
            return self._reply(403)
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        try:
            ttl = int(ttl.strip())
        except (AttributeError, ValueError):
            return self._reply(400)
        if not 1 <= ttl <= self.state.args.token_max_ttl:
            return self._reply(400)
        tok = self.state.new_token(ttl)
        return self._reply(
            200, tok, {"X-aws-ec2-metadata-token-ttl-seconds": str(ttl)})

    def do_GET(self):
        self._drain_body()
        st = self.state
        path = self.path.split("?", 1)[0]
        tok = self.headers.get("X-aws-ec2-metadata-token")
        if tok is not None or not st.args.v1:
            if tok is None or not st.token_ok(tok.strip()):
                return self._reply(401)
        if path.rstrip("/") == "/latest/api/token":
            return self._reply(405)
        if path in ("/", ""):
            return self._reply(200, "latest")
        if path.rstrip("/") == "/latest":
            key = ""
        elif path.startswith("/latest/"):
            key = path[len("/latest/"):].strip("/")
            if "//" in key:
                return self._reply(404)
        else:
            return self._reply(404)
        status, body = st.lookup(key)
        return self._reply(status, body)

    def _not_allowed(self):
        self._drain_body()
        self._reply(405)

    do_POST = do_DELETE = do_PATCH = do_HEAD = _not_allowed


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError,
                            TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="fake EC2 IMDSv2")
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--cred-ttl", type=int, default=3600)
    ap.add_argument("--token-max-ttl", type=int, default=21600)
    ap.add_argument("--set", action="append", metavar="PATH=VALUE")
    ap.add_argument("--missing", action="append", metavar="PATH")
    ap.add_argument("--no-tags", action="store_true")
    ap.add_argument("--hang", type=float, default=0.0)
    ap.add_argument("--v1", action="store_true")
    args = ap.parse_args()

    Handler.state = State(args)
    srv = Server(("127.0.0.1", args.port), Handler)
    port = srv.server_address[1]

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True)
    t.start()

    if args.port_file:
        d = os.path.dirname(os.path.abspath(args.port_file))
        tmp = os.path.join(d, ".%s.tmp.%d" % (
            os.path.basename(args.port_file), os.getpid()))
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)

    while not stop.wait(0.2):
        if not t.is_alive():
            break
    # Bounded: a suite run once found shutdown() waiting for 8 minutes on the serving thread (blocked in a
    # poll); every thread is a daemon, so returning ends the process whatever they are doing.
    stopper = threading.Thread(target=srv.shutdown, daemon=True)
    stopper.start()
    stopper.join(2.0)
    if not stopper.is_alive():
        srv.server_close()
    if Handler.state.logf:
        Handler.state.logf.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
