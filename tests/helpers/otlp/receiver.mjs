// SPDX-License-Identifier: MIT
//
// accel-otlp's test peer: an OTLP/HTTP metrics receiver that decodes what it is sent with OpenTelemetry's own
// generated protobuf types (@opentelemetry/otlp-transformer's protobufjs root, pinned by package-lock.json and
// installed by make: `npm ci` here), and answers as a script says, one action per request, to inject the faults a
// collector or backend can show.
//
//   node receiver.mjs --dir DIR [--port N] [--path /v1/metrics] [--script ACTIONS] [--control FILE]
//                     [--tls CERT KEY [--client-ca CA]]
//
// It listens on 127.0.0.1 (port 0: one the kernel picks), then writes the port to DIR/port (renamed into place,
// so a reader never sees half of it) and to stdout. Each POST to the path is:
//   - un-gzipped when its Content-Encoding is gzip (any other encoding but identity is refused);
//   - for Content-Type application/x-protobuf, decoded as an ExportMetricsServiceRequest;
//   - for application/json, checked against the OTLP/JSON rules first (the JSON mapping of protobuf with
//     lowerCamelCase field names, 64-bit integers as decimal strings, enums as integers, no unknown field), by
//     converting it to the generated type and back and comparing the two field by field;
//   - answered as the next action says (an ExportMetricsServiceResponse or google.rpc.Status in the request's
//     encoding).
// A request that breaks the protocol is answered 400 and logged in DIR/errors.log (a test expects it empty).
//
// ACTIONS is a comma-separated list consumed one per request (a refused one included); when it runs out every request gets "ok". When
// FILE (--control) exists at a request, its content replaces the rest of the list and FILE is removed. Actions:
//   ok                  200 with an empty response
//   partial:N:MSG       200 with partial_success {rejected_data_points: N, error_message: MSG}
//   429:SECS            429 with Retry-After: SECS (seconds)
//   429date:SECS        429 with Retry-After: an HTTP date SECS seconds from now
//   502, 503, 504       that status (503:SECS adds Retry-After: SECS)
//   400:MSG             400 with a google.rpc.Status {code: 3, message: MSG}
//   400text:MSG         400 with MSG as text/plain (not a Status)
//   NNN[:MSG]           any other status, with a Status when MSG is given
//   slow:MS             answer 200 after MS milliseconds
//   hang                never answer (the socket stays open until the client closes it)
//   reset               read part of the body, then reset the connection (TCP RST) without answering
// The data of a request answered 2xx (partial included) is kept; of any other answer, not.
//
// Writes, in DIR:
//   requests.jsonl  each request taken, decoded, as one line of OTLP/JSON (the generated type's toObject:
//                   lowerCamelCase, int64 as strings, enums as integers)
//   requests.log    one JSON line per request received, written when it is answered: seq, start (unix ms when
//                   its body was in), t (unix ms when answered), action, status, path,
//                   contentType, contentEncoding, bytes (as sent), points (data points; -1 when not decoded),
//                   headers (all of them, lower-case names)
//   errors.log      protocol violations, one a line
//
// Nothing here skips: a missing package is an import error and the receiver exits 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const protobuf = require('protobufjs/minimal');

const svc = root.opentelemetry.proto.collector.metrics.v1;
const Request = svc.ExportMetricsServiceRequest;
const Response = svc.ExportMetricsServiceResponse;
const MAX_BODY = 64 << 20; /* bytes: a request larger than this is refused (413) */
const TO_JSON = { longs: String, enums: Number, bytes: String, json: true };

function usage(msg) {
	process.stderr.write(`receiver: ${msg}\n`);
	process.exit(2);
}

function parseArgs(argv) {
	const o = { port: 0, path: '/v1/metrics', script: '', control: null, tls: null, clientCa: null, dir: null };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const next = () => {
			if (i + 1 >= argv.length) usage(`${a} needs a value`);
			return argv[++i];
		};
		if (a === '--dir') o.dir = next();
		else if (a === '--port') o.port = Number(next());
		else if (a === '--path') o.path = next();
		else if (a === '--script') o.script = next();
		else if (a === '--control') o.control = next();
		else if (a === '--tls') o.tls = [next(), next()];
		else if (a === '--client-ca') o.clientCa = next();
		else usage(`unknown argument ${a}`);
	}
	if (!o.dir) usage('--dir is required');
	if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) usage('--port: not a port');
	if (o.clientCa && !o.tls) usage('--client-ca needs --tls');
	return o;
}

function splitScript(s) {
	return s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
}

/* The next action: the control file's list when one was written, else the command line's. */
function nextAction(st) {
	if (st.control && fs.existsSync(st.control)) {
		st.queue = splitScript(fs.readFileSync(st.control, 'utf8'));
		fs.rmSync(st.control, { force: true });
	}
	return st.queue.length ? st.queue.shift() : 'ok';
}

function countPoints(req) {
	let n = 0;
	for (const rm of req.resourceMetrics || [])
		for (const sm of rm.scopeMetrics || [])
			for (const m of sm.metrics || []) {
				const d = m.gauge || m.sum || m.histogram || m.exponentialHistogram || m.summary;
				if (d && d.dataPoints) n += d.dataPoints.length;
			}
	return n;
}

/* Drop what the JSON mapping lets a sender leave out (empty lists), so that only real differences remain. */
function normalize(v) {
	if (Array.isArray(v)) return v.map(normalize);
	if (v && typeof v === 'object') {
		const out = {};
		for (const [k, x] of Object.entries(v)) {
			if (Array.isArray(x) && x.length === 0) continue;
			out[k] = normalize(x);
		}
		return out;
	}
	return v;
}

/*
 * The first place where the body as sent (a) differs from the generated type's canonical OTLP/JSON of it (b), as a
 * message naming its JSON path and the rule it breaks; null when they agree.
 */
function jsonDiff(a, b, where) {
	if (Array.isArray(a) || Array.isArray(b)) {
		if (!Array.isArray(a) || !Array.isArray(b)) return `${where}: expected ${Array.isArray(b) ? 'a list' : 'not a list'}`;
		if (a.length !== b.length) return `${where}: ${a.length} elements, the type keeps ${b.length}`;
		for (let i = 0; i < a.length; i++) {
			const d = jsonDiff(a[i], b[i], `${where}[${i}]`);
			if (d) return d;
		}
		return null;
	}
	if (a && typeof a === 'object' && b && typeof b === 'object') {
		for (const k of Object.keys(a)) {
			if (!(k in b)) {
				if (a[k] === null) return `${where}.${k}: null is not a value`;
				return k.includes('_')
					? `${where}.${k}: field names are lowerCamelCase in OTLP/JSON`
					: `${where}.${k}: not a field of the type here`;
			}
			const d = jsonDiff(a[k], b[k], `${where}.${k}`);
			if (d) return d;
		}
		for (const k of Object.keys(b)) if (!(k in a)) return `${where}.${k}: missing after conversion`;
		return null;
	}
	if (typeof a === 'number' && typeof b === 'string' && /^-?\d+$/.test(b))
		return `${where}: a 64-bit integer must be a decimal JSON string, not the number ${a}`;
	if (typeof a === 'string' && typeof b === 'number')
		return `${where}: ${/^[A-Z_]+$/.test(a) ? 'an enum must be an integer' : 'expected a number'}, not "${a}"`;
	if (a !== b && !(typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)))
		return `${where}: ${JSON.stringify(a)} is not valid here (the type reads it as ${JSON.stringify(b)})`;
	return null;
}

/* The request as OTLP/JSON, or throws an Error saying what is wrong with it. */
function decode(body, json) {
	if (!json) {
		const msg = Request.decode(body);
		return Request.toObject(msg, TO_JSON);
	}
	let sent;
	try {
		sent = JSON.parse(body.toString('utf8'));
	} catch (e) {
		throw new Error(`not JSON: ${e.message}`);
	}
	if (!sent || typeof sent !== 'object' || Array.isArray(sent)) throw new Error('$: not a JSON object');
	const canon = Request.toObject(Request.fromObject(sent), TO_JSON);
	const d = jsonDiff(normalize(sent), normalize(canon), '$');
	if (d) throw new Error(d);
	return canon;
}

function statusBody(code, message, json) {
	if (json) return Buffer.from(JSON.stringify({ code, message }));
	/* google.rpc.Status: code (1, int32), message (2, string); not in the metrics root, so written field by field */
	return Buffer.from(protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message).finish());
}

function okBody(json, rejected, message) {
	const o = rejected === undefined ? {} : { partialSuccess: { rejectedDataPoints: String(rejected), errorMessage: message } };
	return json ? Buffer.from(JSON.stringify(o)) : Buffer.from(Response.encode(Response.fromObject(o)).finish());
}

/* The answer an action asks for: { status, headers, body } or { hang } / { reset } / { delay, then }. */
function plan(action, json) {
	const [verb, ...rest] = action.split(':');
	const arg = rest.join(':');
	const ctype = json ? 'application/json' : 'application/x-protobuf';
	const ok = (body) => ({ status: 200, headers: { 'Content-Type': ctype }, body });
	if (verb === 'ok') return ok(okBody(json));
	if (verb === 'partial') {
		const [n, ...m] = rest;
		return ok(okBody(json, Number(n), m.join(':')));
	}
	if (verb === 'slow') return { delay: Number(arg), then: ok(okBody(json)) };
	if (verb === 'hang') return { hang: true };
	if (verb === 'reset') return { reset: true };
	if (verb === '429date') {
		const when = new Date(Date.now() + Number(arg) * 1000).toUTCString();
		return { status: 429, headers: { 'Retry-After': when, 'Content-Type': ctype }, body: statusBody(8, 'slow down', json) };
	}
	if (verb === '400text') return { status: 400, headers: { 'Content-Type': 'text/plain' }, body: Buffer.from(arg) };
	const status = Number(verb);
	if (!Number.isInteger(status) || status < 200 || status > 599) throw new Error(`unknown action "${action}"`);
	if (status === 429 || ((status === 502 || status === 503 || status === 504) && arg !== '')) {
		const h = { 'Content-Type': ctype };
		if (arg !== '') h['Retry-After'] = arg;
		return { status, headers: h, body: statusBody(status === 429 ? 8 : 14, 'unavailable', json) };
	}
	if (arg !== '') return { status, headers: { 'Content-Type': ctype }, body: statusBody(status < 500 ? 3 : 13, arg, json) };
	return { status, headers: { 'Content-Type': 'text/plain' }, body: Buffer.from(`status ${status}\n`) };
}

function appendLine(file, obj) {
	fs.appendFileSync(file, (typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
}

function handle(st, req, res) {
	const seq = ++st.seq;
	const action = nextAction(st);
	const entry = {
		seq, action, status: 0, path: req.url, contentType: req.headers['content-type'] || '',
		contentEncoding: req.headers['content-encoding'] || '', bytes: 0, points: -1, headers: req.headers,
	};
	const finish = (status) => {
		entry.status = status;
		entry.t = Date.now();
		appendLine(st.log, entry);
	};
	if (action === 'reset') {
		/* Take the first chunk of the body, then reset the connection in the middle of the request. */
		req.once('data', () => {
			finish(0);
			req.socket.resetAndDestroy();
		});
		req.once('end', () => {
			if (entry.status === 0 && !req.socket.destroyed) {
				finish(0);
				req.socket.resetAndDestroy();
			}
		});
		return;
	}
	const chunks = [];
	let size = 0;
	req.on('data', (c) => {
		size += c.length;
		if (size <= MAX_BODY) chunks.push(c);
	});
	req.on('end', () => {
		entry.bytes = size;
		entry.start = Date.now();
		const fail = (status, why) => {
			appendLine(st.errors, `request ${seq}: ${why}`);
			res.writeHead(status, { 'Content-Type': 'text/plain' });
			res.end(`${why}\n`);
			finish(status);
		};
		if (req.method !== 'POST') return fail(405, `method ${req.method}, not POST`);
		if (req.url !== st.path) return fail(404, `path ${req.url}, not ${st.path}`);
		if (size > MAX_BODY) return fail(413, `body of ${size} bytes`);
		const ctype = entry.contentType.split(';')[0].trim();
		const json = ctype === 'application/json';
		if (!json && ctype !== 'application/x-protobuf') return fail(415, `Content-Type "${entry.contentType}"`);
		let body = Buffer.concat(chunks);
		const enc = entry.contentEncoding.toLowerCase();
		if (enc === 'gzip') {
			try {
				body = zlib.gunzipSync(body);
			} catch (e) {
				return fail(400, `Content-Encoding gzip but the body does not un-gzip: ${e.message}`);
			}
		} else if (enc !== '' && enc !== 'identity') return fail(415, `Content-Encoding "${enc}"`);
		let decoded;
		try {
			decoded = decode(body, json);
		} catch (e) {
			return fail(400, `${json ? 'OTLP/JSON' : 'protobuf'}: ${e.message}`);
		}
		entry.points = countPoints(decoded);
		let p;
		try {
			p = plan(action, json);
		} catch (e) {
			return fail(500, e.message);
		}
		const answer = (a) => {
			if (a.status >= 200 && a.status < 300) appendLine(st.requests, decoded);
			res.writeHead(a.status, a.headers);
			res.end(a.body);
			finish(a.status);
		};
		if (p.hang) {
			st.hung.push(res);
			finish(0);
		} else if (p.delay !== undefined) setTimeout(() => answer(p.then), p.delay);
		else answer(p);
	});
}

function main() {
	const o = parseArgs(process.argv.slice(2));
	fs.mkdirSync(o.dir, { recursive: true });
	const st = {
		seq: 0, queue: splitScript(o.script), control: o.control, path: o.path, hung: [],
		log: path.join(o.dir, 'requests.log'), requests: path.join(o.dir, 'requests.jsonl'),
		errors: path.join(o.dir, 'errors.log'),
	};
	for (const f of [st.log, st.requests, st.errors]) fs.writeFileSync(f, '');
	const onRequest = (req, res) => handle(st, req, res);
	let server;
	if (o.tls) {
		const opts = { cert: fs.readFileSync(o.tls[0]), key: fs.readFileSync(o.tls[1]) };
		if (o.clientCa) Object.assign(opts, { ca: fs.readFileSync(o.clientCa), requestCert: true, rejectUnauthorized: true });
		server = https.createServer(opts, onRequest);
		server.on('tlsClientError', (e) => appendLine(path.join(o.dir, 'tls.log'), e.message));
	} else server = http.createServer(onRequest);
	server.keepAliveTimeout = 30000;
	server.listen(o.port, '127.0.0.1', () => {
		const port = server.address().port;
		const tmp = path.join(o.dir, `port.${process.pid}`);
		fs.writeFileSync(tmp, `${port}\n`);
		fs.renameSync(tmp, path.join(o.dir, 'port'));
		process.stdout.write(`${port}\n`);
	});
	const stop = () => {
		for (const r of st.hung) r.destroy();
		server.close(() => process.exit(0));
		server.closeAllConnections();
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
}

main();
