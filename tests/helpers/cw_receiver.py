#!/usr/bin/python3
"""A CloudWatch PutMetricData endpoint for the tests, checked with botocore.

Every request goes through what AWS's own SDK knows about CloudWatch:

  * SigV4: the signature is recomputed with botocore's SigV4Auth from the
    same credentials, the request's X-Amz-Date and its signed headers; the
    signed-header list must be the one botocore itself would sign. A
    mismatch answers 403 SignatureDoesNotMatch, as AWS does.
  * The form body is parsed into PutMetricData's input, validated with
    botocore's ParamValidator against the service model
    (botocore/data/cloudwatch/2010-08-01/service-2.json) plus the limits the
    model states only in prose (1000 datums, 1 MB, the Value range, the
    two-week window, StorageResolution 1 or 60, the StandardUnit enum), and
    answered 400 the way CloudWatch does.
  * The body must be byte for byte what botocore's Query serializer writes
    for that input (written in the model's member order).

Accepted datums are appended to --record as JSON lines; every request is
logged to --log as one JSON line.

Usage:
  cw_receiver.py --port-file F [--record F] [--log F] [--region R]
      [--cred KEY:SECRET[:TOKEN]]... [--imds-creds]
      [--faults SPEC] [--flaky P --seed N] [--poison V] [--poison-anon V]
      [--port N]
  cw_receiver.py --check-bodies FILE    (validate --dry-run output, exit 0/1)

--faults SPEC: what the next requests get, in order, then success:
  comma-separated ITEM or ITEM*N with ITEM one of throttle (400 Throttling),
  500, 503, reset (close without answering), hang (sleep --hang-s, then
  answer 503), expired (403 ExpiredToken), ok.
--flaky P: each request after the --faults list fails with probability P,
  the failure drawn from those above (seeded by --seed).
--poison V: a datum whose Value is V gets 400 InvalidParameterValue naming
  its member, as CloudWatch does; --poison-anon V: the same without naming it.
--imds-creds: accept the rotating role keys tests/helpers/fake_imds.py
  hands out (ASIATESTKEY<n>, derived secret and token).
SIGTERM/SIGINT: clean shutdown, exit 0.
"""

import argparse
import datetime
import gzip
import http.server
import json
import math
import os
import random
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse
import uuid

import botocore.session
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSRequestPreparer
from botocore.credentials import Credentials
from botocore.serialize import create_serializer
from botocore.validate import ParamValidator

NS_XML = "http://monitoring.amazonaws.com/doc/2010-08-01/"
MAX_DATUMS = 1000
MAX_DIMS = 30  # dimensions per datum (botocore's validator does not check the maximum)
MAX_BODY = 1048576
TWO_WEEKS = 14 * 86400
TWO_HOURS = 2 * 3600

_model = botocore.session.get_session().get_service_model("cloudwatch")
OP = _model.operation_model("PutMetricData")
INPUT = OP.input_shape
DATUM = INPUT.members["MetricData"].member
UNITS = set(DATUM.members["Unit"].enum)


class Reject(Exception):
    def __init__(self, status, code, message, sender=True):
        super().__init__(message)
        self.status, self.code, self.message, self.sender = \
            status, code, message, sender


# ---- the form body -> PutMetricData input --------------------------------

def parse_form(body):
    """Form body -> (params in model order, raw pairs). Raises Reject."""
    try:
        text = body.decode("utf-8")
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True,
                                       strict_parsing=True)
    except (UnicodeDecodeError, ValueError) as e:
        raise Reject(400, "MalformedQueryString", str(e))
    flat = {}
    for k, v in pairs:
        if k in flat:
            raise Reject(400, "InvalidParameterValue",
                         "Parameter %s appears twice." % k)
        flat[k] = v
    if flat.pop("Action", None) != "PutMetricData":
        raise Reject(400, "InvalidAction", "Could not find operation.")
    if flat.pop("Version", None) != "2010-08-01":
        raise Reject(400, "InvalidParameterValue", "Bad Version.")
    params = {}
    if "Namespace" in flat:
        params["Namespace"] = flat.pop("Namespace")
    data = {}
    for k in list(flat):
        m = re.fullmatch(r"MetricData\.member\.([1-9][0-9]*)\.(.+)", k)
        if not m:
            raise Reject(400, "InvalidParameterValue",
                         "Unknown parameter %s." % k)
        data.setdefault(int(m.group(1)), {})[m.group(2)] = flat.pop(k)
    if data:
        if sorted(data) != list(range(1, len(data) + 1)):
            raise Reject(400, "InvalidParameterValue",
                         "MetricData members are not numbered 1..N.")
        params["MetricData"] = [datum(i, data[i])
                                for i in range(1, len(data) + 1)]
    return params


def num(i, field, v, integer=False):
    try:
        return int(v) if integer else float(v)
    except ValueError:
        raise Reject(400, "InvalidParameterValue",
                     "The value %s for parameter MetricData.member.%d.%s "
                     "is invalid." % (v, i, field))


def datum(i, f):
    """One member's fields -> a dict in the model's member order."""
    out = {}
    dims = {}
    for k in list(f):
        m = re.fullmatch(r"Dimensions\.member\.([1-9][0-9]*)\.(Name|Value)", k)
        if m:
            dims.setdefault(int(m.group(1)), {})[m.group(2)] = f.pop(k)
    for name in DATUM.members:
        if name == "Dimensions":
            if dims:
                if sorted(dims) != list(range(1, len(dims) + 1)):
                    raise Reject(400, "InvalidParameterValue",
                                 "Dimensions of MetricData.member.%d are not "
                                 "numbered 1..N." % i)
                out["Dimensions"] = [
                    {kk: dims[j][kk] for kk in ("Name", "Value")
                     if kk in dims[j]} for j in sorted(dims)]
        elif name in f:
            v = f.pop(name)
            if name == "Value":
                v = num(i, name, v)
            elif name == "StorageResolution":
                v = num(i, name, v, integer=True)
            elif name == "Timestamp":
                try:
                    v = datetime.datetime.strptime(
                        v, "%Y-%m-%dT%H:%M:%S.%fZ" if "." in v
                        else "%Y-%m-%dT%H:%M:%SZ").replace(
                            tzinfo=datetime.timezone.utc)
                except ValueError:
                    raise Reject(400, "InvalidParameterValue",
                                 "The value %s for parameter "
                                 "MetricData.member.%d.Timestamp is invalid."
                                 % (v, i))
            out[name] = v
    if f:
        raise Reject(400, "InvalidParameterValue",
                     "Unknown parameter MetricData.member.%d.%s." %
                     (i, sorted(f)[0]))
    return out


def botocore_body(params):
    """What botocore sends for params: its serializer, then its urlencode."""
    req = create_serializer("query").serialize_to_request(params, OP)
    aws = AWSRequest(method="POST", url="http://x/", data=req["body"],
                     headers=req["headers"])
    return AWSRequestPreparer()._prepare_body(aws).encode()


def check_limits(params, now):
    """CloudWatch's rules beyond the shapes. Raises Reject."""
    report = ParamValidator().validate(params, INPUT)
    if report.has_errors():
        text = report.generate_report()
        code = "MissingParameter" if "Missing required" in text \
            else "InvalidParameterValue"
        raise Reject(400, code, text.replace("\n", " "))
    ns = params["Namespace"]
    if ns.startswith("AWS/") or not all(32 <= ord(c) < 127 for c in ns):
        raise Reject(400, "InvalidParameterValue",
                     "The value %s for parameter Namespace is invalid." % ns)
    data = params["MetricData"]
    if len(data) > MAX_DATUMS:
        raise Reject(400, "InvalidParameterValue",
                     "The collection MetricData must not have a size "
                     "greater than %d." % MAX_DATUMS)
    for i, d in enumerate(data, 1):
        p = "MetricData.member.%d" % i
        if "Value" not in d and "StatisticValues" not in d \
                and "Values" not in d:
            raise Reject(400, "MissingParameter",
                         "The parameter %s.Value is required." % p)
        v = d.get("Value")
        if v is not None and (math.isnan(v) or math.isinf(v)
                              or abs(v) > 2.0 ** 360
                              or (v != 0 and abs(v) < 2.0 ** -360)):
            raise Reject(400, "InvalidParameterValue",
                         "The value %s for parameter %s.Value is invalid."
                         % (v, p))
        if "Unit" in d and d["Unit"] not in UNITS:
            raise Reject(400, "InvalidParameterValue",
                         "The value %s for parameter %s.Unit is invalid."
                         % (d["Unit"], p))
        if d.get("StorageResolution", 60) not in (1, 60):
            raise Reject(400, "InvalidParameterValue",
                         "The value %s for parameter %s.StorageResolution "
                         "is invalid." % (d["StorageResolution"], p))
        ts = d.get("Timestamp")
        if ts is not None:
            age = now - ts.timestamp()
            if age > TWO_WEEKS or age < -TWO_HOURS:
                raise Reject(400, "InvalidParameterValue",
                             "The parameter %s.Timestamp must specify a time "
                             "no more than two weeks in the past and no more "
                             "than two hours in the future." % p)
        if len(d.get("Dimensions", [])) > MAX_DIMS:
            raise Reject(400, "InvalidParameterValue",
                         "The collection %s.Dimensions must not have a size "
                         "greater than %d." % (p, MAX_DIMS))
        names = set()
        for j, dim in enumerate(d.get("Dimensions", []), 1):
            for kk in ("Name", "Value"):
                s = dim[kk]
                if not all(32 <= ord(c) < 127 for c in s) or not s.strip():
                    raise Reject(400, "InvalidParameterValue",
                                 "The value %s for parameter "
                                 "%s.Dimensions.member.%d.%s is invalid."
                                 % (s, p, j, kk))
            if dim["Name"].startswith(":"):
                raise Reject(400, "InvalidParameterValue",
                             "The value %s for parameter "
                             "%s.Dimensions.member.%d.Name is invalid."
                             % (dim["Name"], p, j))
            if dim["Name"] in names:
                raise Reject(400, "InvalidParameterCombination",
                             "The collection %s.Dimensions must not contain "
                             "duplicate dimension names." % p)
            names.add(dim["Name"])


def record_of(ns, d):
    ts = d.get("Timestamp")
    return {
        "ns": ns,
        "name": d["MetricName"],
        "dims": [[x["Name"], x["Value"]] for x in d.get("Dimensions", [])],
        "ts": ts.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if ts else None,
        "value": d.get("Value"),
        "unit": d.get("Unit"),
        "res": d.get("StorageResolution", 60),
    }


# ---- SigV4 ------------------------------------------------------------------

AUTH_RE = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,"
    r"\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$")


def imds_secret(key):
    """The secret and token fake_imds.py derives for ASIATESTKEY<n>."""
    m = re.fullmatch(r"ASIATESTKEY(\d{9})", key)
    if not m:
        return None
    n = int(m.group(1))
    return (("fakeSecretKey/%04d/" % n).ljust(40, "x"),
            "IQoJb3JpZ2luX2VjEFAKE%04d" % n + "A" * 300 + "==")


def verify_sigv4(st, method, path, headers, body):
    """Raises Reject unless botocore computes the same signature. -> key."""
    auth = headers.get("Authorization", "")
    m = AUTH_RE.match(auth)
    if not m:
        raise Reject(403, "IncompleteSignature",
                     "Authorization header is not SigV4.")
    key, day, region, service, signed, sig = m.groups()
    secret, token = None, None
    if key in st.creds:
        secret, token = st.creds[key]
    elif st.args.imds_creds and imds_secret(key):
        secret, token = imds_secret(key)
    if secret is None:
        raise Reject(403, "InvalidClientTokenId",
                     "The security token included in the request is "
                     "invalid.")
    if region != st.args.region or service != "monitoring":
        raise Reject(403, "SignatureDoesNotMatch",
                     "Credential should be scoped to a valid region and "
                     "service monitoring.")
    sent_token = headers.get("X-Amz-Security-Token")
    if (token or None) != (sent_token or None):
        raise Reject(403, "InvalidClientTokenId",
                     "The security token included in the request is "
                     "invalid.")
    amzdate = headers.get("X-Amz-Date", "")
    try:
        t = datetime.datetime.strptime(amzdate, "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        raise Reject(403, "IncompleteSignature", "No X-Amz-Date.")
    if abs(time.time() - t.timestamp()) > 900:
        raise Reject(403, "SignatureDoesNotMatch", "Signature expired.")
    if day != amzdate[:8]:
        raise Reject(403, "SignatureDoesNotMatch", "Credential date.")
    # What botocore signs for this request: its own header set.
    sdk = {"Host": headers.get("Host"), "X-Amz-Date": amzdate,
           "Content-Type": headers.get("Content-Type")}
    if headers.get("Content-Encoding"):
        sdk["Content-Encoding"] = headers.get("Content-Encoding")
    if sent_token:
        sdk["X-Amz-Security-Token"] = sent_token
    req = AWSRequest(method=method, url="http://%s%s" % (headers.get("Host"),
                                                         path),
                     data=body, headers=sdk)
    req.context["timestamp"] = amzdate
    signer = SigV4Auth(Credentials(key, secret, token), service, region)
    want_signed = signer.signed_headers(signer.headers_to_sign(req))
    creq = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, creq), req)
    if signed != want_signed:
        raise Reject(403, "SignatureDoesNotMatch",
                     "Signed headers %s, botocore signs %s." %
                     (signed, want_signed))
    if sig != want:
        raise Reject(403, "SignatureDoesNotMatch",
                     "The request signature we calculated does not match "
                     "the signature you provided.")
    return key


# ---- the server ---------------------------------------------------------------

class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.creds = {}
        for c in args.cred or []:
            parts = c.split(":", 2)
            if len(parts) < 2:
                sys.exit("cw_receiver: --cred KEY:SECRET[:TOKEN]")
            self.creds[parts[0]] = (parts[1],
                                    parts[2] if len(parts) > 2 else None)
        self.faults = []
        for item in (args.faults or "").split(","):
            if not item:
                continue
            name, _, n = item.partition("*")
            self.faults += [name] * int(n or 1)
        self.rng = random.Random(args.seed)
        self.n = 0
        self.rec = open(args.record, "a") if args.record else None
        self.log = open(args.log, "a") if args.log else None

    def next_fault(self):
        with self.lock:
            self.n += 1
            if self.faults:
                return self.faults.pop(0)
            if self.args.flaky and self.rng.random() < self.args.flaky:
                return self.rng.choice(["throttle", "500", "503", "reset",
                                        "hang"])
            return "ok"

    def write_log(self, entry):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(entry) + "\n")
                self.log.flush()

    def write_records(self, recs):
        if self.rec:
            with self.lock:
                for r in recs:
                    self.rec.write(json.dumps(r) + "\n")
                self.rec.flush()


def error_xml(code, message, sender=True):
    return ('<ErrorResponse xmlns="%s">\n  <Error>\n    <Type>%s</Type>\n'
            '    <Code>%s</Code>\n    <Message>%s</Message>\n  </Error>\n'
            '  <RequestId>%s</RequestId>\n</ErrorResponse>\n' % (
                NS_XML, "Sender" if sender else "Receiver", code,
                message.replace("&", "&amp;").replace("<", "&lt;")
                .replace(">", "&gt;"), uuid.uuid4()))


OK_XML = ('<PutMetricDataResponse xmlns="%s">\n  <ResponseMetadata>\n'
          '    <RequestId>%%s</RequestId>\n  </ResponseMetadata>\n'
          '</PutMetricDataResponse>\n' % NS_XML)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self):
        st = self.state
        entry = {"n": None, "status": 200, "code": "", "datums": 0}
        try:
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
        except (ValueError, OSError):
            self.close_connection = True
            return
        fault = st.next_fault()
        entry["n"] = st.n
        entry["fault"] = fault
        entry["bytes"] = len(body)
        entry["gzip"] = self.headers.get("Content-Encoding") == "gzip"
        try:
            if fault == "reset":
                st.write_log(dict(entry, status=0, code="reset"))
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.close_connection = True
                return
            if fault == "hang":
                time.sleep(st.args.hang_s)
                raise Reject(503, "ServiceUnavailable", "Hung, then gave up.",
                             sender=False)
            if fault == "throttle":
                raise Reject(400, "Throttling", "Rate exceeded")
            if fault in ("500", "503"):
                raise Reject(int(fault), "InternalServiceError" if fault ==
                             "500" else "ServiceUnavailable",
                             "Injected failure.", sender=False)
            if fault == "expired":
                raise Reject(403, "ExpiredToken",
                             "The security token included in the request is "
                             "expired")
            if self.path != "/":
                raise Reject(404, "NotFound", "No such path.")
            entry["key"] = verify_sigv4(st, "POST", self.path, self.headers,
                                        body)
            entry["token"] = bool(self.headers.get("X-Amz-Security-Token"))
            ctype = self.headers.get("Content-Type")
            if ctype != "application/x-www-form-urlencoded; charset=utf-8":
                raise Reject(400, "InvalidParameterValue",
                             "Content-Type %s." % ctype)
            if entry["gzip"]:
                body = gzip.decompress(body)
            if len(body) > MAX_BODY:
                raise Reject(413, "RequestEntityTooLarge",
                             "Request size %d exceeded 1048576 bytes" %
                             len(body))
            params = parse_form(body)
            check_limits(params, time.time())
            want = botocore_body(params)
            if want != body:
                i = next((k for k in range(min(len(want), len(body)))
                          if want[k] != body[k]), min(len(want), len(body)))
                raise Reject(400, "NotBotocoreEncoding",
                             "Body differs from botocore's at byte %d: got "
                             "%r, botocore %r" % (i, body[i:i + 60],
                                                  want[i:i + 60]))
            data = params["MetricData"]
            for i, d in enumerate(data, 1):
                v = d.get("Value")
                if v is not None and v in (st.args.poison or []):
                    raise Reject(400, "InvalidParameterValue",
                                 "The value %s for parameter "
                                 "MetricData.member.%d.Value is invalid."
                                 % (v, i))
                if v is not None and v in (st.args.poison_anon or []):
                    raise Reject(400, "InvalidParameterValue",
                                 "One or more parameters are invalid.")
            st.write_records([record_of(params["Namespace"], d)
                              for d in data])
            entry["datums"] = len(data)
            st.write_log(entry)
            self.reply(200, OK_XML % uuid.uuid4())
        except Reject as r:
            entry.update(status=r.status, code=r.code, message=r.message)
            st.write_log(entry)
            self.reply(r.status, error_xml(r.code, r.message, r.sender))

    def _not_allowed(self):
        self.reply(405, error_xml("InvalidAction", "Use POST."))

    do_GET = do_PUT = do_DELETE = _not_allowed


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError,
                                          ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def check_bodies(path):
    """Validate --dry-run output: each line one body botocore would send."""
    bad = 0
    with open(path, "rb") as f:
        for ln, line in enumerate(f, 1):
            body = line.rstrip(b"\n")
            try:
                params = parse_form(body)
                check_limits(params, time.time() if not os.environ.get(
                    "CW_CHECK_NOW") else float(os.environ["CW_CHECK_NOW"]))
                if botocore_body(params) != body:
                    raise Reject(400, "NotBotocoreEncoding", "differs")
            except Reject as r:
                print("%s:%d: %s: %s" % (path, ln, r.code, r.message))
                bad += 1
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description="botocore-checked CloudWatch")
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--record")
    ap.add_argument("--log")
    ap.add_argument("--region", default="us-west-2")
    ap.add_argument("--cred", action="append")
    ap.add_argument("--imds-creds", action="store_true")
    ap.add_argument("--faults")
    ap.add_argument("--flaky", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang-s", type=float, default=2.0)
    ap.add_argument("--poison", type=float, action="append")
    ap.add_argument("--poison-anon", type=float, action="append")
    ap.add_argument("--check-bodies")
    args = ap.parse_args()
    if args.check_bodies:
        return check_bodies(args.check_bodies)

    Handler.state = State(args)
    srv = Server(("127.0.0.1", args.port), Handler)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    t = threading.Thread(target=srv.serve_forever,
                         kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.replace(tmp, args.port_file)
    while not stop.wait(0.1):
        pass
    srv.shutdown()
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
