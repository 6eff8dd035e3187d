#!/usr/bin/env python3
"""Subscribes to KV-cache events as izwi-server and vLLM publish them (docs/kv_events.md).

Decodes every message strictly, keeps the set of cached block hashes (BlockStored adds,
BlockRemoved deletes, AllBlocksCleared empties) and prints at the end one JSON line:
    {"events": N, "batches": M, "blocks": [sorted hashes]}
Anything malformed, and a gap in a topic's sequence numbers, ends it with exit code 1 and the
reason on stderr. With --strict the events must also be consistent with a stream seen from its start:
a parent and a removed hash must be cached, a stored hash must not be, and each hash must be the
documented FNV-1a hash of its parent and token ids.

It stops after --seconds, once the --until-file exists (first waiting for a message whose
sequence number is the one the file holds, if any), or on SIGINT / SIGTERM. Lines on stdout
before the JSON: "ready ENDPOINT" once subscribed (the endpoint bound, with --bind),
"receiving" at the first message.

Needs Debian's python3-zmq and python3-msgpack (/usr/bin/python3).
"""

import argparse
import json
import os
import signal
import struct
import sys
import time

import msgpack
import zmq

U64 = 1 << 64
# How long to wait, once told to stop, for the message with the sequence number the stop file names.
STOP_WAIT_S = 10.0


class Malformed(Exception):
    pass


def documented_hash(parent, tokens):
    h = 0xCBF29CE484222325
    data = struct.pack("<Q", 0 if parent is None else parent) + b"".join(struct.pack("<i", t) for t in tokens)
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) % U64
    return h


def expect(condition, what):
    if not condition:
        raise Malformed(what)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_hash(value):
    return is_int(value) and 0 <= value < U64


class Cache:
    def __init__(self, strict):
        self.strict = strict
        self.blocks = set()
        self.events = 0

    def apply(self, event):
        expect(isinstance(event, list) and event and isinstance(event[0], str), f"event {event!r} is not [tag, ...]")
        tag = event[0]
        if tag == "BlockStored":
            expect(len(event) == 7, f"BlockStored has {len(event)} fields, expected 7")
            _, hashes, parent, tokens, block_size, lora_id, medium = event
            expect(isinstance(hashes, list) and hashes and all(map(is_hash, hashes)), f"block_hashes {hashes!r}")
            expect(parent is None or is_hash(parent), f"parent_block_hash {parent!r}")
            expect(is_int(block_size) and block_size > 0, f"block_size {block_size!r}")
            expect(isinstance(tokens, list) and all(is_int(t) and -(1 << 31) <= t < (1 << 31) for t in tokens),
                   "token_ids are not int32s")
            expect(len(tokens) == len(hashes) * block_size,
                   f"{len(tokens)} token_ids for {len(hashes)} blocks of {block_size}")
            expect(lora_id is None or is_int(lora_id), f"lora_id {lora_id!r}")
            expect(medium is None or isinstance(medium, str), f"medium {medium!r}")
            if self.strict:
                expect(parent is None or parent in self.blocks, f"parent {parent} is not cached")
            for i, h in enumerate(hashes):
                if self.strict:
                    expected = documented_hash(parent, tokens[i * block_size:(i + 1) * block_size])
                    expect(h == expected, f"hash {h} is not the documented hash {expected}")
                    expect(h not in self.blocks, f"block {h} stored while cached")
                self.blocks.add(h)
                parent = h
        elif tag == "BlockRemoved":
            expect(len(event) == 3, f"BlockRemoved has {len(event)} fields, expected 3")
            _, hashes, medium = event
            expect(isinstance(hashes, list) and all(map(is_hash, hashes)), f"block_hashes {hashes!r}")
            expect(medium is None or isinstance(medium, str), f"medium {medium!r}")
            for h in hashes:
                expect(not self.strict or h in self.blocks, f"block {h} removed while not cached")
                self.blocks.discard(h)
        elif tag == "AllBlocksCleared":
            expect(len(event) == 1, f"AllBlocksCleared has {len(event)} fields, expected 1")
            self.blocks.clear()
        else:
            raise Malformed(f"unknown event tag {tag!r}")
        self.events += 1


def decode_batch(payload):
    try:
        batch = msgpack.unpackb(payload, raw=False)
    except Exception as e:  # any msgpack error is a malformed message
        raise Malformed(f"payload is not msgpack: {e}")
    # vLLM omits a nil data_parallel_rank in some versions: [ts, events] is accepted too.
    expect(isinstance(batch, list) and len(batch) in (2, 3), f"batch {batch!r} is not [ts, events, dp_rank]")
    expect(isinstance(batch[0], float), f"timestamp {batch[0]!r} is not a float")
    expect(isinstance(batch[1], list), "events are not an array")
    expect(len(batch) == 2 or batch[2] is None or is_int(batch[2]), f"data_parallel_rank {batch[2]!r}")
    return batch[1]


def stop_sequence(path):
    """None until the stop file exists; then the sequence number it names (-1 when empty)."""
    if path is None or not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read().strip()
    return int(text) if text else -1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True, help="e.g. tcp://127.0.0.1:5557")
    parser.add_argument("--topic", default="", help="topic prefix to subscribe to (default: all)")
    parser.add_argument("--bind", action="store_true", help="bind the endpoint (as the llm-d indexer does)")
    parser.add_argument("--strict", action="store_true", help="check consistency from the stream's start")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--seconds", type=float, help="stop after this long")
    stop.add_argument("--until-file", help="stop once this file exists, after the sequence number it holds")
    args = parser.parse_args()
    # Without --seconds or --until-file it runs until SIGINT or SIGTERM, then reports.
    interrupted = []
    signal.signal(signal.SIGTERM, lambda *_: interrupted.append(True))
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))

    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    socket.setsockopt(zmq.LINGER, 0)
    if args.bind:
        socket.bind(args.endpoint)
    else:
        socket.connect(args.endpoint)
    socket.setsockopt(zmq.SUBSCRIBE, args.topic.encode())
    print("ready", socket.getsockopt_string(zmq.LAST_ENDPOINT), flush=True)

    cache = Cache(args.strict)
    batches = 0
    last_seq = {}  # by topic: each topic numbers its messages from 0
    deadline = time.monotonic() + args.seconds if args.seconds is not None else None
    stop_at = None  # when the stop file appeared
    try:
        while True:
            wanted = stop_sequence(args.until_file)
            if wanted is not None:
                stop_at = stop_at or time.monotonic()
                if max(last_seq.values(), default=-1) >= wanted or wanted < 0:
                    break
                expect(time.monotonic() - stop_at < STOP_WAIT_S,
                       f"message {wanted} did not arrive within {STOP_WAIT_S} s (last: {last_seq})")
            if interrupted or (deadline is not None and time.monotonic() >= deadline):
                break
            if not socket.poll(20):
                continue
            frames = socket.recv_multipart()
            expect(len(frames) == 3, f"message of {len(frames)} frames, expected 3")
            topic, seq_bytes, payload = frames
            expect(topic.startswith(args.topic.encode()), f"topic {topic!r}")
            expect(len(seq_bytes) == 8, f"sequence number of {len(seq_bytes)} bytes")
            seq = int.from_bytes(seq_bytes, "big")
            previous = last_seq.get(topic)
            expect(previous is None or seq == previous + 1, f"sequence gap in {topic!r}: {previous} then {seq}")
            if not last_seq:
                print("receiving", flush=True)
            last_seq[topic] = seq
            for event in decode_batch(payload):
                cache.apply(event)
            batches += 1
    except Malformed as e:
        print(f"kv_events_subscriber: {e}", file=sys.stderr)
        return 1
    finally:
        socket.close()
        context.term()
    print(json.dumps({"events": cache.events, "batches": batches, "blocks": sorted(cache.blocks)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
