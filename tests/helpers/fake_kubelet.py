#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake kubelet for tests: HTTPS on 127.0.0.1 serving GET /pods (a v1 PodList). Stdlib only.

Usage:
  fake_kubelet.py --cert server.pem --key server.key --token-file token --pods pods.json \\
                  --port-file F [--mode-file M] [--log L]

  --pods FILE       the PodList to serve (read at every request, so a test can change it).
  --token-file F    the bearer token a request must carry ("Authorization: Bearer <token>"); else 401.
  --port-file F     bind 127.0.0.1 port 0; once listening, write the port to F (tmp file + rename).
  --mode-file M     read at every request: "ok" (default), "401" (every request refused),
                    "garbage" (200 with a body that is not JSON), "500", "hang" (no answer for 30 s).
  --log L           append "METHOD PATH STATUS" per request (flushed), so a test counts fetches.
SIGTERM/SIGINT: exit 0.
"""

import argparse
import http.server
import ssl
import sys
import time

import fake_http


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--pods", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--mode-file")
    ap.add_argument("--log")
    o = ap.parse_args()
    token = open(o.token_file, encoding="utf-8").read().strip()

    class Handler(fake_http.Handler):
        def do_GET(self):
            m = fake_http.mode(o.mode_file)
            if m == "hang":
                time.sleep(30)
            if self.headers.get("Authorization") != "Bearer " + token or m == "401":
                self.reply(401, b'{"kind":"Status","status":"Failure","reason":"Unauthorized","code":401}')
            elif self.path != "/pods":
                self.reply(404, b"404 page not found\n", "text/plain")
            elif m == "garbage":
                self.reply(200, b"<html>this is not a PodList", "text/html")
            elif m == "500":
                self.reply(500, b"internal error\n", "text/plain")
            else:
                self.reply(200, open(o.pods, "rb").read())

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(o.cert, o.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.log_path = o.log
    fake_http.serve(srv, o.port_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
