#!/usr/bin/env python3
"""Writes the small tokenizer.json files of izwi's Hugging Face parity tests (one folder each).

Vocabularies and merges come from a toy BPE trainer over CORPUS below: the merges only need to be
consistent, since the reference ids are computed at test time by the real library
(tests/parity/tokenizers_js, the Rust tokenizers through @anush008/tokenizers). Every
tokenizer.json component izwi implements is used by at least one folder:

  spm-llama2     Prepend + Replace normalizers, no pre-tokenizer, BPE byte_fallback + fuse_unk,
                 decoder Replace/ByteFallback/Fuse/Strip, TemplateProcessing with BOS (Llama 2, Mistral)
  spm-metaspace  Metaspace pre-tokenizer (prepend_scheme first, split false), Metaspace decoder,
                 TemplateProcessing BOS + EOS (transformers' current Llama conversion)
  spm-gemma      Replace normalizer, Split(" ", MergedWithPrevious), byte_fallback, no unk,
                 decoder Replace/ByteFallback/Fuse (Gemma style)
  spm-first-split  Strip(left) + NFC normalizers, Metaspace (prepend_scheme first, split true): no
                 prefix after an added token or where Strip removed the start; Metaspace decoder
  spm-unk        NFKC, Metaspace (prepend_scheme always, split true), unk_token + fuse_unk without
                 byte_fallback, Metaspace decoder with prepend_scheme always
  o200k          Split(o200k regex, Removed, invert) + ByteLevel(use_regex false), ByteLevel decoder
                 and post-processor in a Sequence with TemplateProcessing (GPT-4o style)
  words          Strip + Lowercase + NFD normalizers, Whitespace pre-tokenizer, BPE with
                 continuing_subword_prefix "##" and end_of_word_suffix "</w>", unk, dropout
                 (ignored at inference), decoder Replace/Strip(stop)
  splits         NFKD, Sequence of Punctuation(MergedWithPrevious), Digits(individual),
                 Split(regex, MergedWithNext), Split(literal, Contiguous), WhitespaceSplit
  digits         NFC, Sequence of Digits(contiguous), Punctuation(Isolated), Whitespace,
                 ByteLevel decoder-free chain (no decoder: tokens joined by spaces)
Run: python3 make_tokenizers.py  (writes ../tokenizer-hf-<name>/tokenizer.json)
"""
import collections
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

CORPUS = """
The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away into the forest.
A tokenizer turns text into numbers, and a decoder turns the numbers back into text again.
In 2024 the model read 1,234,567 tokens per second — faster than the 2023 version (987 tokens/s).
She said: "Don't stop! We'll win, they're sure, I'm certain, you've seen it, he'd agree."
Machine learning models need data, compute, and careful evaluation before deployment.
Streaming speech recognition emits words while the speaker is still talking.
Les modèles de langue écrivent du texte en français, en español y en português também.
Übermäßig große Straßen führen über die Brücke nach Köln. Größe, Maß, Fuß.
東京は日本の首都です。日本語の文章も少し含まれています。
Привет, как дела? Всё хорошо, спасибо.
email: someone@example.com, url: https://example.com/path?query=1&x=2#frag
def encode(self, text): return [self.vocab[t] for t in text.split()]
    indented code   with   runs of   spaces
tabs\tand\tnewlines
line two
""" * 3

SPACE = "\u2581"


def train(words, base, merges_wanted, prefix="", suffix=""):
    """Toy BPE: words is a Counter of tuples of symbols; returns (vocab list, merges)."""
    vocab = list(base)
    seen = set(vocab)
    words = dict(words)
    merges = []
    for _ in range(merges_wanted):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), count = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if count < 2:
            break
        merged = a + (b[len(prefix):] if prefix else b)
        merges.append([a, b])
        if merged not in seen:
            seen.add(merged)
            vocab.append(merged)
        new_words = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + c
        words = new_words
    return vocab, merges


def added(tokens):
    return [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for t, i in tokens]


def bpe_model(vocab, merges, **options):
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}
    model.update(options)
    model["vocab"] = {t: i for i, t in enumerate(vocab)}
    model["merges"] = merges
    return model


def document(model, added_tokens, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": post_processor,
            "decoder": decoder, "model": model}


def bos_template(bos, bos_id, eos=None, eos_id=None):
    single = [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]
    pair = single + [{"Sequence": {"id": "B", "type_id": 1}}]
    special = {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}
    if eos:
        single = single + [{"SpecialToken": {"id": eos, "type_id": 0}}]
        special[eos] = {"id": eos, "ids": [eos_id], "tokens": [eos]}
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": special}


def spm_vocab(merges_wanted, byte_tokens=True, keep=lambda ch: True):
    """SentencePiece-style: words start with U+2581; CJK and emoji stay out of the base alphabet."""
    text = CORPUS.replace(" ", SPACE)
    words = collections.Counter(tuple(w) for w in re.findall(SPACE + "*[^" + SPACE + "]+", SPACE + text))
    chars = sorted({ch for w in words for ch in w if keep(ch)})
    words = collections.Counter({w: c for w, c in words.items() if all(keep(ch) for ch in w)})
    specials = ["<unk>", "<s>", "</s>"]
    base = specials + ([f"<0x{b:02X}>" for b in range(256)] if byte_tokens else []) + chars
    return train(words, base, merges_wanted)


def latin(ch):
    return ord(ch) < 0x2000 or ch == SPACE


def byte_level_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


O200K = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def write(name, doc):
    folder = os.path.join(HERE, "..", "tokenizer-hf-" + name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    sp_replace = lambda a, b: {"type": "Replace", "pattern": {"String": a}, "content": b}

    vocab, merges = spm_vocab(600, keep=latin)
    write("spm-llama2", document(
        bpe_model(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer={"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SPACE},
                                                        sp_replace(" ", SPACE)]},
        post_processor=bos_template("<s>", 1),
        decoder={"type": "Sequence", "decoders": [sp_replace(SPACE, " "), {"type": "ByteFallback"},
                                                  {"type": "Fuse"},
                                                  {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}))

    write("spm-metaspace", document(
        bpe_model(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        pre_tokenizer={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
        post_processor=bos_template("<s>", 1, "</s>", 2),
        decoder={"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": SPACE,
                                                   "prepend_scheme": "first", "split": False}]}))

    gvocab, gmerges = spm_vocab(500, keep=lambda ch: ord(ch) < 0x3000 or ch == SPACE)
    write("spm-gemma", document(
        bpe_model(gvocab, gmerges, byte_fallback=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer=sp_replace(" ", SPACE),
        pre_tokenizer={"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        post_processor=bos_template("<s>", 1),
        decoder={"type": "Sequence", "decoders": [sp_replace(SPACE, " "), {"type": "ByteFallback"}, {"type": "Fuse"}]}))

    write("spm-first-split", document(
        bpe_model(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer={"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": False},
                                                        {"type": "NFC"}]},
        pre_tokenizer={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": True},
        decoder={"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": SPACE,
                                                   "prepend_scheme": "first", "split": True}]}))

    uvocab, umerges = spm_vocab(400, byte_tokens=False, keep=latin)
    write("spm-unk", document(
        bpe_model(uvocab, umerges, unk_token="<unk>", fuse_unk=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer={"type": "NFKC"},
        pre_tokenizer={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True},
        decoder={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True}))

    alphabet = byte_level_alphabet()
    pieces = [m.group(0) for m in re.finditer(r"\w+|\s+|[^\w\s]+", CORPUS)]
    words = collections.Counter(tuple(alphabet[b] for b in p.encode("utf-8")) for p in pieces)
    bvocab, bmerges = train(words, [alphabet[b] for b in range(256)], 700)
    specials = [("<|endoftext|>", len(bvocab)), ("<|im_start|>", len(bvocab) + 1), ("<|im_end|>", len(bvocab) + 2)]
    write("o200k", document(
        bpe_model(bvocab, bmerges, ignore_merges=True),
        added(specials),
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": O200K}, "behavior": "Removed", "invert": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        post_processor={"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            bos_template("<|im_start|>", specials[1][1])]},
        decoder={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}))

    lowered = CORPUS.lower()
    word_list = re.findall(r"\w+|[^\w\s]+", lowered)
    words = collections.Counter(
        (w + "</w>",) if len(w) == 1 else tuple([w[0]] + ["##" + c for c in w[1:-1]] + ["##" + w[-1] + "</w>"])
        for w in word_list)
    base = ["[UNK]"] + sorted({s for w in words for s in w})
    wvocab, wmerges = train(words, base, 500, prefix="##")
    write("words", document(
        bpe_model(wvocab, wmerges, unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>",
                  dropout=0.0),
        added([("[UNK]", 0)]),
        normalizer={"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": True},
                                                        {"type": "Lowercase"}, {"type": "NFD"}]},
        pre_tokenizer={"type": "Whitespace"},
        # Strip with stop > 0 panics in the library on an empty token, so it runs before any Fuse
        # (whose output is empty for an empty text) and only sees tokens that end with "</w>" -> " ".
        decoder={"type": "Sequence", "decoders": [sp_replace("</w>", " "), sp_replace("##", ""),
                                                  {"type": "Strip", "content": " ", "start": 0, "stop": 1}]}))

    write("splits", document(
        bpe_model(vocab, merges, unk_token="<unk>", byte_fallback=True),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer={"type": "Sequence", "normalizers": [{"type": "NFKD"}, sp_replace(" ", SPACE)]},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Punctuation", "behavior": "MergedWithPrevious"},
            {"type": "Digits", "individual_digits": True},
            {"type": "Split", "pattern": {"Regex": SPACE + "+"}, "behavior": "MergedWithNext", "invert": False},
            {"type": "Split", "pattern": {"String": "e"}, "behavior": "Contiguous", "invert": False},
            {"type": "WhitespaceSplit"}]},
        decoder={"type": "Sequence", "decoders": [{"type": "ByteFallback"}, sp_replace(SPACE, " "), {"type": "Fuse"},
                                                  {"type": "Strip", "content": " ", "start": 2, "stop": 0}]}))

    write("digits", document(
        bpe_model(vocab, merges, unk_token="<unk>", fuse_unk=False, byte_fallback=False),
        added([("<unk>", 0), ("<s>", 1), ("</s>", 2)]),
        normalizer={"type": "NFC"},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": False},
            {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Split", "pattern": {"Regex": "[aeiou]"}, "behavior": "Removed", "invert": False},
            {"type": "Whitespace"}]}))


if __name__ == "__main__":
    main()
