#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A webhook receiver for the Alertmanager test (tests/integration/deploy_alerts.sh).

webhook_receiver.py --port N --out FILE: listen on 127.0.0.1:N; append each POSTed
JSON body to FILE as one compact line, answer 200. Anything else is 404/400.
"""
import argparse
import http.server
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            try:
                doc = json.loads(body)
            except ValueError:
                self.send_error(400, "not JSON")
                return
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(doc, separators=(",", ":")) + "\n")
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, fmt, *a):
            sys.stderr.write("webhook: " + (fmt % a) + "\n")

    http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
