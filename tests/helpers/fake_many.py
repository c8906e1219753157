#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake metrics endpoint for tests with many endpoint runtimes: an HTTP
server on 127.0.0.1 (a free port, written to PORT_FILE once it listens)
that answers every path alike, on a thread per connection, so a hundred
runtimes can each keep a connection of their own.

  (default)   a one-sample exposition (text/plain; version=0.0.4)
  --gzip-bomb a gzip body that decodes to 64 MiB of one comment line (about
              64 KiB on the wire): a client decoding it works until its
              body cap

Python's standard library only.
"""
import argparse
import gzip
import http.server
import os
import socketserver

ap = argparse.ArgumentParser()
ap.add_argument("port_file")
ap.add_argument("--gzip-bomb", action="store_true")
args = ap.parse_args()

if args.gzip_bomb:
    BODY = gzip.compress(b"# " + b"x" * (64 << 20) + b"\n", 6)
    HEADERS = [("Content-Encoding", "gzip")]
else:
    BODY = b'# TYPE nv_inference_request_success counter\nnv_inference_request_success{model="m",version="1"} 1\n'
    HEADERS = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        for k, v in HEADERS:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        try:
            self.wfile.write(BODY)
        except OSError:
            pass  # a client that stops reading at its body cap

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def handle_error(self, request, client_address):
        pass  # connections reset by a client that stopped


srv = Server(("127.0.0.1", 0), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
