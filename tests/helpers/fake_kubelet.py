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
import os
import signal
import ssl
import sys
import time


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

    def mode():
        try:
            return open(o.mode_file, encoding="utf-8").read().strip() or "ok"
        except (OSError, TypeError):
            return "ok"

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def reply(self, status, body, ctype="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if o.log:
                with open(o.log, "a", encoding="utf-8") as f:
                    f.write("%s %s %d\n" % (self.command, self.path, status))

        def do_GET(self):
            m = mode()
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
    tmp = o.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, o.port_file)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
