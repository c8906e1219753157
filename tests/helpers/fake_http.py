# SPDX-License-Identifier: MIT
"""What the fake HTTP servers of the tests share (fake_kubelet.py, fake_ecs.py). Stdlib only.

  mode(path)          the test's mode file's first word ("ok" when the file is missing or empty)
  Handler             a request handler that logs nothing to stderr; reply() answers and, when the
                      server has a log path (server.log_path), appends "METHOD PATH STATUS" to it
  serve(srv, port)    write srv's port to the file port (tmp file + rename, so a reader never sees
                      half of it), exit 0 on SIGTERM, serve until then
"""

import http.server
import os
import signal
import sys


def mode(path):
    try:
        return open(path, encoding="utf-8").read().strip() or "ok"
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
        log = getattr(self.server, "log_path", None)
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write("%s %s %d\n" % (self.command, self.path, status))


def serve(srv, port_file):
    tmp = port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, port_file)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
