#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake Amazon ECS agent and task metadata endpoint v4 for tests: HTTP on 127.0.0.1. Stdlib only.

Serves, from files read at every request (so a test can change them):
  GET /v1/tasks             the agent's introspection API: --tasks FILE
  GET /v4/<id>              the metadata endpoint: the container's own metadata: --container FILE
  GET /v4/<id>/task         the metadata endpoint: its task: --task FILE
(<id> is the container's DockerId in --container). Anything else: 404.

Usage:
  fake_ecs.py --tasks F --task F --container F --port-file F [--mode-file M] [--log L]

  --port-file F     bind 127.0.0.1 port 0; once listening, write the port to F (tmp file + rename).
  --mode-file M     read at every request: "ok" (default), "404" (every request), "garbage" (200 with a body
                    that is not JSON), "slow" (the answer after 10 s).
  --log L           append "METHOD PATH STATUS" per request (flushed), so a test counts fetches.
SIGTERM/SIGINT: exit 0.
"""

import argparse
import http.server
import json
import os
import time

import fake_http


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--container", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--mode-file")
    ap.add_argument("--log")
    o = ap.parse_args()

    ids = {}  # the container file's DockerId by (mtime, size): a file of megabytes is parsed once

    def own_id():
        st = os.stat(o.container)
        key = (st.st_mtime_ns, st.st_size)
        if key not in ids:
            ids[key] = json.load(open(o.container, encoding="utf-8"))["DockerId"]
        return ids[key]

    class Handler(fake_http.Handler):
        def do_GET(self):
            m = fake_http.mode(o.mode_file)
            if m == "slow":
                time.sleep(10)
            own = own_id()
            files = {"/v1/tasks": o.tasks, "/v4/" + own: o.container, "/v4/" + own + "/task": o.task}
            if m == "404" or self.path not in files:
                self.reply(404, b"404 page not found\n", "text/plain")
            elif m == "garbage":
                self.reply(200, b"<html>Service Unavailable", "text/html")
            else:
                self.reply(200, open(files[self.path], "rb").read())

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.log_path = o.log
    fake_http.serve(srv, o.port_file)


if __name__ == "__main__":
    main()
