#!/usr/bin/python3
"""Routes a shared-prefix chat workload over 3 izwi-server pods: by KV events versus round robin.

Starts NUM_PODS izwi-server processes on loopback, all serving the same model, each publishing its
KV-cache events (--kv-events) to this script's bound ZeroMQ SUB socket as pods publish to the llm-d
KV-cache indexer. The script keeps each pod's cached block set from the events (docs/kv_events.md)
and replays one workload twice, on fresh pods each time:

  prefix   each request goes to the pod that caches the longest prefix of its prompt, found by
           hashing the prompt's full blocks as the engine does; ties (no match included) go to the
           pod with the fewest requests in flight, then the fewest sent;
  round    round robin.

The workload: conversations that share one of a few long system prompts, several turns each, every
turn's prompt the whole history so far (system prompt, earlier user turns and replies). Prompts are
token ids, so any text model serves. Each pod gets a small KV pool (--kv-blocks) so that the
working set fits the fleet but not one pod.

Reported per policy: the prefix-cache hit rate (prompt positions served from cache / looked up, from
the pods' /metrics) and the mean and p90 time to first token measured by the clients (streamed
/v1/completions). With --check it runs a small workload and exits 1 unless every request succeeded,
every event decoded without a sequence gap and the prefix policy's hit rate beats round robin's.

Needs Debian's python3-zmq and python3-msgpack (/usr/bin/python3) and a built izwi-server.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import msgpack
import zmq

# The engine's documented block hash, as the KV-events subscriber of the serving tests checks it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "serving"))
from kv_events_subscriber import documented_hash as block_hash  # noqa: E402

NUM_PODS = 3
EVENT_WAIT_S = 2.0  # how long a conversation waits for its last turn's events before going on


def prompt_hashes(tokens, block_size):
    hashes, parent = [], None
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = block_hash(parent, tokens[start:start + block_size])
        hashes.append(parent)
    return hashes


class KvIndex:
    """Each pod's cached block hashes, kept from its KV events (topic kv@<pod>@<model>)."""

    def __init__(self, endpoint):
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(endpoint)
        self.socket.setsockopt(zmq.SUBSCRIBE, b"kv@")
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.lock = threading.Lock()
        self.blocks = {}  # pod -> set of hashes
        self.block_size = None
        self.last_seq = {}
        self.events = 0
        self.errors = []
        self.stopping = False
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self):
        while not self.stopping:
            if not self.socket.poll(10):
                continue
            topic, seq, payload = self.socket.recv_multipart()
            pod = topic.decode().split("@")[1]
            seq = int.from_bytes(seq, "big")
            timestamp, events, *_ = msgpack.unpackb(payload, raw=False)
            with self.lock:
                previous = self.last_seq.get(topic)
                if previous is not None and seq != previous + 1:
                    self.errors.append(f"sequence gap on {topic!r}: {previous} then {seq}")
                self.last_seq[topic] = seq
                cached = self.blocks.setdefault(pod, set())
                for event in events:
                    self.events += 1
                    if event[0] == "BlockStored":
                        self.block_size = event[4]
                        cached.update(event[1])
                    elif event[0] == "BlockRemoved":
                        cached.difference_update(event[1])
                    elif event[0] == "AllBlocksCleared":
                        cached.clear()
                    else:
                        self.errors.append(f"unknown event {event[0]!r}")

    def matched_blocks(self, pod, hashes):
        with self.lock:
            cached = self.blocks.get(pod, set())
            n = 0
            while n < len(hashes) and hashes[n] in cached:
                n += 1
            return n

    def wait_for(self, pod, hashes, timeout_s):
        """Waits until `pod` has announced every hash (its events lag the HTTP answer a little)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if self.blocks.get(pod, set()).issuperset(hashes):
                    return
            time.sleep(0.002)

    def close(self):
        self.stopping = True
        self.thread.join()
        self.socket.close()
        self.context.term()


class Pod:
    def __init__(self, server, model_dir, name, kv_events, config_path):
        self.name = name
        self.process = subprocess.Popen(
            [server, "--model", f"m={model_dir}", "--port", "0", "--realtime-port", "-1", "--config", config_path,
             "--kv-events", kv_events, "--pod-name", name],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.process.stdout:
            found = re.search(r"listening on http://([\d.]+):(\d+)", line)
            if found:
                self.url = f"http://{found.group(1)}:{found.group(2)}"
                break
        else:
            raise RuntimeError(f"pod {name} exited before listening (exit {self.process.wait()})")
        # Keep draining its output so a chatty server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()
        self.in_flight = 0
        self.sent = 0

    def metric(self, name):
        with urllib.request.urlopen(self.url + "/metrics", timeout=30) as response:
            text = response.read().decode()
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + "{"))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def make_workload(rng, args):
    """Conversations as lists of turns; a turn is (user token ids, reply token ids)."""
    systems = [[rng.randrange(3, args.vocab) for _ in range(args.system_tokens)] for _ in range(args.systems)]
    conversations = []
    for c in range(args.conversations):
        turns = [([rng.randrange(3, args.vocab) for _ in range(args.user_tokens)],
                  [rng.randrange(3, args.vocab) for _ in range(args.max_tokens)]) for _ in range(args.turns)]
        conversations.append((systems[c % args.systems], turns))
    return conversations


def run_policy(policy, args, conversations, model_dir, config_path):
    index = KvIndex("tcp://127.0.0.1:*")
    pods = [Pod(args.server, model_dir, f"pod-{i}", index.endpoint, config_path) for i in range(NUM_PODS)]
    lock = threading.Lock()
    next_pod = [0]
    ttfts, failures = [], []
    try:
        # A subscriber joins a PUB socket a moment after connecting: wait until every pod's first
        # (empty-cache) batch can arrive before any request is made.
        time.sleep(0.5)

        def route(prompt):
            with lock:
                if policy == "round":
                    pod = pods[next_pod[0] % NUM_PODS]
                    next_pod[0] += 1
                else:
                    hashes = prompt_hashes(prompt, index.block_size) if index.block_size else []
                    pod = max(pods, key=lambda p: (index.matched_blocks(p.name, hashes), -p.in_flight, -p.sent))
                pod.in_flight += 1
                pod.sent += 1
                return pod

        def converse(conversation):
            system, turns = conversation
            history = list(system)
            for user, reply in turns:
                prompt = history + user
                pod = route(prompt)
                body = json.dumps({"model": "m", "prompt": prompt, "max_tokens": args.max_tokens,
                                   "temperature": 0, "stream": True}).encode()
                request = urllib.request.Request(pod.url + "/v1/completions", body,
                                                 {"Content-Type": "application/json"})
                start = time.perf_counter()
                first = None
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        for line in response:
                            if line.startswith(b"data: ") and first is None:
                                first = time.perf_counter() - start
                except Exception as e:  # any failed request fails the run
                    with lock:
                        failures.append(f"{pod.name}: {e}")
                finally:
                    with lock:
                        pod.in_flight -= 1
                if first is not None:
                    with lock:
                        ttfts.append(first)
                # The prompt's blocks are cached once it is answered: let their events reach the
                # index before this conversation's next turn is routed.
                if index.block_size:
                    index.wait_for(pod.name, prompt_hashes(prompt, index.block_size), EVENT_WAIT_S)
                # The client replays the whole conversation next turn, its reply included; the
                # reply's ids are the workload's so that both policies see the same prompts.
                history = prompt + reply

        with ThreadPoolExecutor(args.clients) as clients:
            list(clients.map(converse, conversations))
        queries = sum(p.metric("vllm:prefix_cache_queries_total") for p in pods)
        hits = sum(p.metric("vllm:prefix_cache_hits_total") for p in pods)
        per_pod = [p.sent for p in pods]
    finally:
        for p in pods:
            p.stop()
        index.close()
    ttfts.sort()
    return {
        "policy": policy,
        "requests": len(ttfts) + len(failures),
        "failures": failures,
        "hit_rate": hits / queries if queries else 0.0,
        "mean_ttft_ms": 1000 * sum(ttfts) / len(ttfts) if ttfts else float("nan"),
        "p90_ttft_ms": 1000 * ttfts[int(0.9 * (len(ttfts) - 1))] if ttfts else float("nan"),
        "requests_per_pod": per_pod,
        "events": index.events,
        "event_errors": index.errors,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the izwi-server binary")
    parser.add_argument("--model", required=True, help="a text model folder (token-id prompts: no tokenizer needed)")
    parser.add_argument("--vocab", type=int, default=512, help="token ids are drawn below this")
    parser.add_argument("--systems", type=int, default=6, help="distinct shared system prompts")
    parser.add_argument("--system-tokens", type=int, default=160)
    parser.add_argument("--conversations", type=int, default=36)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--user-tokens", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--clients", type=int, default=6, help="conversations in flight at once")
    parser.add_argument("--kv-blocks", type=int, default=96, help="KV blocks per pod")
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="compute threads per pod (loopback pods share the cores)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="small run; exit 1 unless prefix routing wins")
    args = parser.parse_args()
    if args.check:
        # One client: the order of requests, and so both policies' hit rates, are the same every run.
        args.systems, args.conversations, args.turns, args.clients = 3, 9, 3, 1

    conversations = make_workload(random.Random(args.seed), args)
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "engine.json")
        with open(config_path, "w") as f:
            json.dump({"num_kv_blocks": args.kv_blocks, "block_size": args.block_size, "num_threads": args.threads}, f)
        results = [run_policy(policy, args, conversations, args.model, config_path) for policy in ("prefix", "round")]

    print(f"{NUM_PODS} pods, {len(conversations)} conversations x {args.turns} turns over {args.systems} system "
          f"prompts of {args.system_tokens} tokens, {args.clients} clients, {args.kv_blocks} KV blocks of "
          f"{args.block_size} and {args.threads} thread(s) per pod")
    print(f"{'policy':<8} {'requests':>8} {'hit rate':>9} {'mean TTFT ms':>13} {'p90 TTFT ms':>12}  requests per pod")
    for r in results:
        print(f"{r['policy']:<8} {r['requests']:>8} {r['hit_rate']:>9.3f} {r['mean_ttft_ms']:>13.2f} "
              f"{r['p90_ttft_ms']:>12.2f}  {r['requests_per_pod']}")
    problems = [f"{r['policy']}: {e}" for r in results for e in r["failures"] + r["event_errors"]]
    problems += [f"{r['policy']}: no KV events arrived" for r in results if r["events"] == 0]
    if args.check and results[0]["hit_rate"] <= results[1]["hit_rate"]:
        problems.append(f"prefix routing's hit rate {results[0]['hit_rate']:.3f} does not beat round robin's "
                        f"{results[1]['hit_rate']:.3f}")
    for p in problems:
        print("route_simulation:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
