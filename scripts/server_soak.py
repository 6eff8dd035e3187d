#!/usr/bin/env python3
"""Soaks one izwi-server process with normal, abortive and hostile clients for a fixed time.

  scripts/server_soak.py --server build/server/izwi-server --model tests/data/llama-tiny \\
      --minutes 10 --clients 8 [--seed N]

Starts the server on a free 127.0.0.1 port with the realtime listener on, --api-key fuzz-key (the
key the fuzz corpus carries) and a short --header-timeout, then runs --clients threads until the
time is up, each drawing from a seeded random mix:

  normal    /v1/completions with token-id prompts and /v1/chat/completions, whole and streamed,
            greedy and sampled: each must be answered 200 with a well-formed body or stream;
  abortive  a stream whose socket is closed after its first chunk; a body cut short (the socket
            closed, or half-closed and the answer read); a connection left idle (no bytes, or a
            partial header) that the server must close within its timeouts;
  hostile   each file of tests/fuzz/corpus/http_request/ as raw bytes to the HTTP port (it must be
            answered or closed in time), each file of tests/fuzz/corpus/websocket_handshake/ to the
            realtime port, as is and with the key header added (so its frames reach a session).

Checks: no 5xx status (and no WebSocket close 1011, the listener's internal error) on any request,
each listed with its kind; the process never exits; VmRSS, sampled every --rss-every seconds, is
flat after warm-up: the peak over the run's second half is at most the peak over the minute after
warm-up (a sixth of the run, at most 60 s) + --rss-growth-mb; a greedy completion with fixed prompt
ids made at the start and at the end returns the same answer; SIGTERM at the end exits 0. Prints a
summary table; exit status 0 only when every check holds.

A model folder without a tokenizer (llama-tiny) is served from a temporary folder of links to its
files plus --tokenizer's tokenizer.json and a minimal chat template, so that answers carry decoded
text for the greedy check and chat is served; prompts stay token ids below the model's vocabulary.
Standard library only.
"""

import argparse
import collections
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

API_KEY = "fuzz-key"  # the key in tests/fuzz/corpus/http_request/
MODEL_NAME = "tiny"  # the model name in the corpus requests
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")
# Contents whose tokens (with tokenizer-hf-words) and the template's stay inside llama-tiny's 512 ids.
CHAT_CONTENTS = ["hi", "日本語の文章 東京", "hello", "東京"]
GREEDY_PROMPT = [1, 15, 30, 45, 60, 75, 90, 105]
HTTP_TIMEOUT_S = 60.0  # any one normal request on a busy 2-core machine
HOSTILE_DEADLINE_S = 20.0  # answered or closed within this (the keep-alive wait is 5 s)
WS_LISTEN_S = 2.0  # how long an upgraded hostile WebSocket is read before the client closes it
READ_CAP = 4 << 20  # bytes read back from any one raw exchange
KEEP_ALIVE_S = 5.0  # the server's idle keep-alive wait (docs/serving.md, connection limits)
KINDS = ["completion", "completion stream", "chat", "chat stream", "stream closed early", "body cut short",
         "idle connection", "hostile http", "hostile websocket"]
STATUS_RE = re.compile(rb"HTTP/1\.[01] (\d{3})")


class Stats:
    """Outcomes per request kind, and every failure with its kind."""

    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = collections.defaultdict(collections.Counter)  # kind -> outcome -> count
        self.by_input = collections.defaultdict(collections.Counter)  # (kind, corpus file) -> outcome -> count
        self.failures = []

    def record(self, kind, outcomes, failure=None, corpus_file=None):
        with self.lock:
            for outcome in outcomes:
                self.outcomes[kind][outcome] += 1
                if corpus_file:
                    self.by_input[(kind, corpus_file)][outcome] += 1
            self.outcomes[kind]["#requests"] += 1
            if failure:
                self.failures.append(f"{kind}: {failure}")

    def fail(self, kind, failure):
        with self.lock:
            self.failures.append(f"{kind}: {failure}")


def has_tokenizer(model_dir):
    return any(os.path.exists(os.path.join(model_dir, f)) for f in ("tokenizer.json", "tokenizer.model", "tekken.json"))


def serving_folder(model_dir, tokenizer_dir, tmp):
    """The model folder, or links to its files plus a tokenizer and chat template when it has none."""
    if has_tokenizer(model_dir):
        return model_dir
    folder = os.path.join(tmp, "model")
    os.mkdir(folder)
    for name in os.listdir(model_dir):
        os.symlink(os.path.abspath(os.path.join(model_dir, name)), os.path.join(folder, name))
    os.symlink(os.path.abspath(os.path.join(tokenizer_dir, "tokenizer.json")), os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"chat_template": CHAT_TEMPLATE}, f)
    return folder


class Server:
    def __init__(self, binary, model_dir, header_timeout_s, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        env = dict(os.environ, GOMP_SPINCOUNT="1000")  # the clients share the cores (docs/serving.md)
        self.process = subprocess.Popen(
            [binary, "--model", f"{MODEL_NAME}={model_dir}", "--host", "127.0.0.1", "--port", "0",
             "--realtime-port", "0", "--api-key", API_KEY, "--header-timeout", str(header_timeout_s),
             "--shutdown-grace", "5"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.port = self.realtime_port = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (self.port is None or self.realtime_port is None):
            if self.process.poll() is not None:
                raise RuntimeError(f"izwi-server exited {self.process.returncode} before listening; see {log_path}")
            with open(log_path, errors="replace") as f:
                text = f.read()
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            found_ws = re.search(r"live transcription on ws://127\.0\.0\.1:(\d+)", text)
            self.port = int(found.group(1)) if found else None
            self.realtime_port = int(found_ws.group(1)) if found_ws else None
            time.sleep(0.1)
        if self.port is None or self.realtime_port is None:
            self.process.kill()
            raise RuntimeError(f"izwi-server did not print both ports within 120 s; see {log_path}")

    def rss_kb(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def stop(self):
        """SIGTERM, then SIGKILL if it does not exit; returns the exit status of the SIGTERM."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                self.log.close()
                return "did not exit within 30 s of SIGTERM (killed)"
        self.log.close()
        return self.process.returncode


def post_json(port, path, body, stream, timeout=HTTP_TIMEOUT_S):
    """(status, parsed body or list of parsed stream chunks, error text or None)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, json.dumps(body),
                           {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"})
        response = connection.getresponse()
        if response.status != 200 or not stream:
            raw = response.read(READ_CAP)
            try:
                return response.status, json.loads(raw), None
            except ValueError:
                return response.status, None, f"body is not JSON: {raw[:200]!r}"
        chunks = []
        for line in response:
            line = line.strip()
            if not line.startswith(b"data: "):
                continue
            if line == b"data: [DONE]":
                return response.status, chunks, None
            chunk = json.loads(line[6:])
            if "error" in chunk:
                return response.status, chunks, f"error event in the stream: {chunk['error']}"
            chunks.append(chunk)
        return response.status, chunks, "the stream ended without [DONE]"
    finally:
        connection.close()


def greedy_answer(port):
    status, body, error = post_json(port, "/v1/completions", {
        "model": MODEL_NAME, "prompt": GREEDY_PROMPT, "max_tokens": 16, "temperature": 0}, stream=False)
    if status != 200 or error:
        return f"status {status}: {error or body}"
    choice = body["choices"][0]
    return {"text": choice["text"], "finish_reason": choice["finish_reason"], "usage": body["usage"]}


def raw_exchange(port, data, deadline_s, half_close):
    """Sends bytes, reads until the server closes; (bytes read, 'closed' | 'reset' | 'timeout')."""
    received = bytearray()
    ending = "closed"
    with socket.create_connection(("127.0.0.1", port), timeout=deadline_s) as s:
        deadline = time.monotonic() + deadline_s
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before taking everything (413, say): read what it sent
        try:
            while len(received) < READ_CAP:
                left = deadline - time.monotonic()
                if left <= 0:
                    return bytes(received), "timeout"
                s.settimeout(left)
                part = s.recv(65536)
                if not part:
                    break
                received += part
        except ConnectionResetError:
            ending = "reset"
        except socket.timeout:
            ending = "timeout"
    return bytes(received), ending


def statuses(data):
    return [int(m.group(1)) for m in STATUS_RE.finditer(data)]


def ws_close_codes(data):
    """Close codes of the server's frames after a 101 (server frames are unmasked)."""
    head_end = data.find(b"\r\n\r\n")
    if not data.startswith(b"HTTP/1.1 101") or head_end < 0:
        return []
    codes, i = [], head_end + 4
    while i + 2 <= len(data):
        opcode, length = data[i] & 0x0F, data[i + 1] & 0x7F
        i += 2
        if length == 126:
            length, i = int.from_bytes(data[i:i + 2], "big"), i + 2
        elif length == 127:
            length, i = int.from_bytes(data[i:i + 8], "big"), i + 8
        payload = data[i:i + length]
        i += length
        if opcode == 8 and len(payload) >= 2:
            codes.append(int.from_bytes(payload[:2], "big"))
    return codes


def with_key_header(data):
    """The handshake with the API key header added after its request line (if it has one)."""
    line_end = data.find(b"\r\n")
    if line_end < 0:
        return data
    return data[:line_end + 2] + f"Authorization: Bearer {API_KEY}\r\n".encode() + data[line_end + 2:]


class Client:
    def __init__(self, index, args, server, corpora, vocab, stats, stop):
        self.rng = random.Random(args.seed * 1000 + index)
        self.args, self.server, self.corpora, self.vocab = args, server, corpora, vocab
        self.stats, self.stop = stats, stop
        self.kinds = [  # (weight, kind, method)
            (12, "completion", lambda: self.normal("/v1/completions", False)),
            (12, "completion stream", lambda: self.normal("/v1/completions", True)),
            (8, "chat", lambda: self.normal("/v1/chat/completions", False)),
            (8, "chat stream", lambda: self.normal("/v1/chat/completions", True)),
            (8, "stream closed early", self.stream_closed_early),
            (7, "body cut short", self.body_cut_short),
            (3, "idle connection", self.idle_connection),
            (28, "hostile http", self.hostile_http),
            (14, "hostile websocket", self.hostile_websocket),
        ]
        if args.only:
            self.kinds = [k for k in self.kinds if k[1] in args.only]

    def prompt(self, max_len):
        return [self.rng.randrange(3, self.vocab) for _ in range(self.rng.randint(1, max_len))]

    def sampling(self):
        if self.rng.random() < 0.5:
            return {"temperature": 0}
        fields = {"temperature": round(self.rng.uniform(0.3, 1.5), 2), "top_p": round(self.rng.uniform(0.5, 1.0), 2)}
        if self.rng.random() < 0.5:
            fields["top_k"] = self.rng.randint(1, 100)
        if self.rng.random() < 0.5:
            fields["seed"] = self.rng.randrange(1 << 31)
        return fields

    def body(self, path, stream, max_tokens):
        body = {"model": MODEL_NAME, "max_tokens": max_tokens, "stream": stream, **self.sampling()}
        if path == "/v1/completions":
            body["prompt"] = self.prompt(64)
        else:
            body["messages"] = [{"role": "user", "content": self.rng.choice(CHAT_CONTENTS)}]
        return body

    def normal(self, path, stream):
        body = self.body(path, stream, self.rng.randint(1, 48))
        try:
            status, answer, error = post_json(self.server.port, path, body, stream)
        except (OSError, http.client.HTTPException, ValueError) as e:
            return [type(e).__name__], f"{type(e).__name__}: {e}"
        if status != 200:
            return [status], f"status {status}: {answer}"
        if error:
            return [status], error
        if not stream and answer["choices"][0]["finish_reason"] not in ("stop", "length"):
            return [status], f"finish_reason {answer['choices'][0]['finish_reason']!r}"
        return [status], None

    def stream_closed_early(self):
        path = self.rng.choice(["/v1/completions", "/v1/chat/completions"])
        body = self.body(path, True, 200)
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=HTTP_TIMEOUT_S)
        try:
            connection.request("POST", path, json.dumps(body),
                               {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"})
            response = connection.getresponse()
            if response.status == 200:
                for line in response:
                    if line.startswith(b"data: "):
                        break  # the first chunk is in: hang up
            return [response.status], None if response.status == 200 else f"status {response.status}"
        except (OSError, http.client.HTTPException) as e:
            return [type(e).__name__], f"{type(e).__name__}: {e}"
        finally:
            connection.close()

    def body_cut_short(self):
        body = json.dumps(self.body("/v1/completions", False, 8)).encode()
        head = (f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {API_KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        partial = head + body[:self.rng.randrange(len(body))]
        if self.rng.random() < 0.5:  # hang up mid-body, after a pause of up to a second
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as s:
                s.sendall(partial)
                time.sleep(self.rng.uniform(0, 1))
            return ["hung up"], None
        data, ending = raw_exchange(self.server.port, partial, HOSTILE_DEADLINE_S, half_close=True)
        return statuses(data) or [ending], None if ending != "timeout" else "not answered or closed in time"

    def idle_connection(self):
        """No bytes, or a request line and one header: the server must close it within its timeouts."""
        partial_header = self.rng.random() < 0.5
        limit = self.args.header_timeout if partial_header else max(self.args.header_timeout, KEEP_ALIVE_S)
        limit += 5  # slack for a loaded machine
        start = time.monotonic()
        data, ending = raw_exchange(self.server.port,
                                    b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" if partial_header else b"",
                                    limit, half_close=False)
        outcome = statuses(data) or [ending]
        if ending == "timeout":
            return outcome, f"{'partial header' if partial_header else 'no bytes'}: still open after {limit:.0f} s"
        return outcome, None

    def hostile_http(self):
        name, data = self.rng.choice(self.corpora["http_request"])
        got, ending = raw_exchange(self.server.port, data, HOSTILE_DEADLINE_S, half_close=self.rng.random() < 0.5)
        failure = f"{name}: not answered or closed within {HOSTILE_DEADLINE_S:.0f} s" if ending == "timeout" else None
        if any(s >= 500 for s in statuses(got)):
            failure = f"{name}: {got[:200]!r}"
        return statuses(got) or [ending], failure, name

    def hostile_websocket(self):
        name, data = self.rng.choice(self.corpora["websocket_handshake"])
        if self.rng.random() < 0.5:
            name, data = name + " +key", with_key_header(data)
        got, ending = raw_exchange(self.server.realtime_port, data, WS_LISTEN_S, half_close=False)
        codes = ws_close_codes(got)
        outcome = statuses(got)[:1] + [f"close {c}" for c in codes] or [ending]
        if any(s >= 500 for s in statuses(got)[:1]) or 1011 in codes:
            return outcome, f"{name}: {got[:200]!r}", name
        return outcome, None, name

    def run(self, deadline):
        weights = [w for w, _, _ in self.kinds]
        for _ in range(self.args.max_requests):
            if time.monotonic() >= deadline or self.stop.is_set():
                return
            _, kind, method = self.rng.choices(self.kinds, weights)[0]
            try:
                outcomes, failure, *corpus_file = method()
            except Exception as e:  # a client bug must not end the soak silently
                outcomes, failure, corpus_file = [type(e).__name__], f"client error {type(e).__name__}: {e}", []
            if any(isinstance(o, int) and o >= 500 for o in outcomes) and not failure:
                failure = f"status {outcomes}"
            self.stats.record(kind, outcomes, failure, *corpus_file)


def load_corpus(folder):
    return [(name, open(os.path.join(folder, name), "rb").read()) for name in sorted(os.listdir(folder))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the izwi-server binary")
    parser.add_argument("--model", required=True, help="a text model folder")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--header-timeout", type=float, default=2.0, help="the server's --header-timeout")
    parser.add_argument("--rss-every", type=float, default=10.0, help="seconds between VmRSS samples")
    parser.add_argument("--rss-growth-mb", type=float, default=64.0)
    parser.add_argument("--max-requests", type=int, default=10 ** 7, help="per client, besides the time")
    parser.add_argument("--corpus", default=os.path.join(ROOT, "tests", "fuzz", "corpus"))
    parser.add_argument("--tokenizer", default=os.path.join(ROOT, "tests", "data", "tokenizer-hf-words"),
                        help="tokenizer.json folder for a model folder that has none")
    parser.add_argument("--only", type=lambda v: v.split(","), default=None,
                        help="comma-separated request kinds to run alone (to find which one a failure follows)")
    parser.add_argument("--server-log", default=None, help="the server's output (default: a temporary file)")
    args = parser.parse_args()

    if args.only and not set(args.only) <= set(KINDS):
        parser.error(f"--only takes kinds among: {', '.join(KINDS)}")
    with open(os.path.join(args.model, "config.json")) as f:
        vocab = json.load(f)["vocab_size"]
    corpora = {name: load_corpus(os.path.join(args.corpus, name)) for name in ("http_request", "websocket_handshake")}
    duration = args.minutes * 60
    stats, stop = Stats(), threading.Event()
    samples = []  # (seconds since the clients started, VmRSS kB)
    problems = []

    with tempfile.TemporaryDirectory(prefix="izwi-soak-") as tmp:
        log_path = args.server_log or os.path.join(tmp, "server.log")
        server = Server(args.server, serving_folder(args.model, args.tokenizer, tmp), args.header_timeout, log_path)
        exit_status = None
        try:
            greedy_start = greedy_answer(server.port)
            start = time.monotonic()
            deadline = start + duration

            def monitor():
                while not stop.is_set():
                    rss = server.rss_kb()
                    if server.process.poll() is not None:
                        stats.fail("process", f"izwi-server exited {server.process.returncode} during the soak")
                        stop.set()
                        return
                    samples.append((time.monotonic() - start, rss))
                    stop.wait(args.rss_every)

            monitor_thread = threading.Thread(target=monitor, daemon=True)
            monitor_thread.start()
            clients = [Client(i, args, server, corpora, vocab, stats, stop) for i in range(args.clients)]
            threads = [threading.Thread(target=c.run, args=(deadline,), daemon=True) for c in clients]
            for t in threads:
                t.start()
            for t in threads:
                t.join(duration + 2 * HTTP_TIMEOUT_S)
                if t.is_alive():
                    stats.fail("client", "a client thread did not finish (a request hung past every timeout)")
            elapsed = time.monotonic() - start
            stop.set()
            monitor_thread.join()
            if server.process.poll() is None:
                samples.append((elapsed, server.rss_kb()))
                greedy_end = greedy_answer(server.port)
            else:
                greedy_end = "the server is gone"
        finally:
            stop.set()
            exit_status = server.stop()
        server_tail = open(log_path, errors="replace").read().splitlines()[-20:]

    # RSS: flat after warm-up.
    warmup = min(60.0, duration / 6)
    baseline_end = warmup + min(60.0, duration / 6)
    rss = [(t, kb / 1024) for t, kb in samples if kb is not None]
    baseline = [mb for t, mb in rss if warmup <= t <= baseline_end]
    second_half = [mb for t, mb in rss if t >= elapsed / 2]
    rss_ok = bool(baseline and second_half) and max(second_half) <= max(baseline) + args.rss_growth_mb

    # Summary.
    print(f"izwi-server soak: {args.clients} clients, {elapsed / 60:.1f} min, seed {args.seed}, "
          f"header timeout {args.header_timeout:g} s, model {args.model}")
    print(f"{'kind':<20} {'requests':>8} {'5xx':>4}  outcomes")
    total = fives = 0
    for kind in sorted(stats.outcomes):
        counts = stats.outcomes[kind]
        n = counts.pop("#requests")
        kind_fives = sum(c for o, c in counts.items() if isinstance(o, int) and o >= 500)
        total, fives = total + n, fives + kind_fives
        shown = ", ".join(f"{o}: {c}" for o, c in sorted(counts.items(), key=lambda oc: (-oc[1], str(oc[0]))))
        print(f"{kind:<20} {n:>8} {kind_fives:>4}  {shown}")
    print(f"{'total':<20} {total:>8} {fives:>4}")
    print("hostile inputs by corpus file:")
    for (kind, name), counts in sorted(stats.by_input.items()):
        print(f"  {kind} {name}: " + ", ".join(f"{o}: {c}" for o, c in counts.most_common()))
    if rss:
        print(f"RSS: start {rss[0][1]:.1f} MB, peak {max(mb for _, mb in rss):.1f} MB, end {rss[-1][1]:.1f} MB "
              f"({len(rss)} samples); peak after warm-up ({warmup:.0f}-{baseline_end:.0f} s) "
              f"{max(baseline) if baseline else float('nan'):.1f} MB, peak over the second half "
              f"{max(second_half) if second_half else float('nan'):.1f} MB")
        per_minute = collections.defaultdict(float)
        for t, mb in rss:
            per_minute[int(t // 60)] = max(per_minute[int(t // 60)], mb)
        print("RSS peak per minute (MB): " + " ".join(f"{mb:.1f}" for _, mb in sorted(per_minute.items())))
    greedy_ok = isinstance(greedy_start, dict) and greedy_start == greedy_end
    print(f"greedy check: {'same' if greedy_ok else 'DIFFERENT'} "
          f"(start {json.dumps(greedy_start, ensure_ascii=False)}"
          + ("" if greedy_ok else f", end {json.dumps(greedy_end, ensure_ascii=False)}") + ")")

    problems += stats.failures
    if fives:
        problems.append(f"{fives} responses with a 5xx status")
    if not rss_ok:
        problems.append(f"RSS not flat after warm-up (limit: that peak + {args.rss_growth_mb:g} MB), or too few samples")
    if not greedy_ok:
        problems.append("the greedy completion changed (or failed) between the start and the end")
    if exit_status != 0:
        problems.append(f"izwi-server's exit on SIGTERM: {exit_status}")
    print(f"server exit on SIGTERM: {exit_status}")
    for p in problems[:50]:
        print("server_soak: FAIL", p, file=sys.stderr)
    if len(problems) > 50:
        print(f"server_soak: ... and {len(problems) - 50} more", file=sys.stderr)
    if problems:
        print("server_soak: last lines of the server's output:\n  " + "\n  ".join(server_tail), file=sys.stderr)
    print("server_soak:", "OK" if not problems else f"FAILED ({len(problems)} problems)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
