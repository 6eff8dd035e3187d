#!/usr/bin/env python3
"""Writes tekken.json (a small Mistral Tekken tokenizer) and reference.json next to this script.

The vocabulary is trained here, tiktoken-style, on the small corpus below: ranks 0..255 are the
single bytes, each later rank the most frequent adjacent pair of the previous ranks. The
reference ids come from an independent straightforward implementation of tiktoken's
byte-pair merge (lowest rank first, leftmost on ties) over the `regex` module's split, with
special-token names in the text matched first (longest first). Needs only Python 3 + `regex`.
Run: python3 make_tekken.py
"""
import base64
import collections
import json
import os

import regex

PATTERN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
           r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"
           r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
            "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
            "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
            "[TOOL_CONTENT]", "[AUDIO]", "[BEGIN_AUDIO]", "[TRANSCRIBE]", "[STREAMING_PAD]",
            "[STREAMING_WORD]"]
NUM_SPECIAL = 32  # ids 25..31 are unlisted: <SPECIAL_25>.. as mistral_common fills them
MERGES = 300
CUT = 8  # default_vocab_size leaves out the last 8 trained ranks, as real files may

CORPUS = """The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away.
Speech recognition turns audio into text, and text generation turns text into more text.
Voxtral streams audio in chunks of eighty milliseconds and writes the words it hears.
Il était une fois un café très célèbre à Paris, où l'on parlait de musique et de cinéma.
Der schnelle braune Fuchs springt über den faulen Hund. Straße, Größe, Äpfel.
你好，世界。今天天气很好。我们一起去公园散步吧。
Привет, мир! Как дела? Всё хорошо.
emoji: 😀 🎉 👍🏽 👨‍👩‍👧 numbers 1234567890 and 3.14159, code: def f(x): return x * 2
""" * 3

CASES = ["Hello, world!", "The quick brown fox jumps over the lazy dog.", "café résumé naïve",
         "你好世界", "Größe Äpfel Straße", "😀🎉 👍🏽 👨‍👩‍👧", "12345 and 3.14159",
         "line1\nline2\r\n\n  indented\ttab", "  leading and trailing  ", "",
         "<s>[INST] What is Voxtral? [/INST]It transcribes.</s>",
         "x[STREAMING_PAD][STREAMING_PAD]y", "[TRANSCRIBE]speech[STREAMING_WORD]", "Привет мир",
         "def f(x):\n    return x * 2", "unseen words: zyxwvut qqq", "<SPECIAL_30>tail"]


def split(text):
    return [m.group(0) for m in regex.finditer(PATTERN, text)]


def train(corpus):
    words = collections.Counter(w.encode() for w in split(corpus))
    ranks = [bytes([b]) for b in range(256)]
    seqs = {w: [bytes([b]) for b in w] for w in words}
    for _ in range(MERGES):
        pairs = collections.Counter()
        for w, n in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        ranks.append(a + b)
        for w, s in seqs.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    return ranks


def bpe(piece, rank_of):
    if piece in rank_of:
        return [rank_of[piece]]
    parts = [bytes([b]) for b in piece]
    while True:
        best = None
        for i in range(len(parts) - 1):
            r = rank_of.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return [rank_of[p] for p in parts]
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def encode(text, rank_of, special_names):
    ids = []
    names = sorted(special_names, key=len, reverse=True)
    pos = start = 0
    while pos <= len(text):
        hit = next((n for n in names if text.startswith(n, pos)), None) if pos < len(text) else None
        if hit is None and pos < len(text):
            pos += 1
            continue
        for piece in split(text[start:pos]):
            ids += [r + NUM_SPECIAL for r in bpe(piece.encode(), rank_of)]
        if hit is None:
            break
        ids.append(special_names.index(hit))
        pos = start = pos + len(hit)
    return ids


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ranks = train(CORPUS)
    kept = ranks[:len(ranks) - CUT]
    rank_of = {}
    for r, b in enumerate(kept):
        rank_of.setdefault(b, r)
    names = SPECIALS + [f"<SPECIAL_{i}>" for i in range(len(SPECIALS), NUM_SPECIAL)]
    tekken = {
        "config": {"pattern": PATTERN, "num_vocab_tokens": len(ranks), "default_vocab_size": NUM_SPECIAL + len(kept),
                   "default_num_special_tokens": NUM_SPECIAL, "version": "v7"},
        "vocab": [{"rank": r, "token_bytes": base64.b64encode(b).decode(),
                   "token_str": b.decode("utf-8") if b.decode("utf-8", "ignore") == b.decode("utf-8", "replace") else None}
                  for r, b in enumerate(ranks)],
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(SPECIALS)],
    }
    cases = []
    for text in CASES:
        ids = encode(text, rank_of, names)
        raw = b"".join(names[i].encode() if i < NUM_SPECIAL else kept[i - NUM_SPECIAL] for i in ids)
        cases.append({"text": text, "ids": ids, "decoded": raw.decode("utf-8", "replace")})
    with open(os.path.join(here, "tekken.json"), "w") as f:
        json.dump(tekken, f, ensure_ascii=False, indent=1)
    with open(os.path.join(here, "reference.json"), "w") as f:
        json.dump({"tokenizer": "tekken-small", "cases": cases}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
