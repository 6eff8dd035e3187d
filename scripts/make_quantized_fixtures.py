#!/usr/bin/env python3
"""Makes the tiny pre-quantized checkpoints in tests/data from the float llama-tiny fixture.

Each folder is what the format's own tools release: config.json with `quantization_config`, and
model.safetensors whose linear layers are packed by the format's published rules (AutoGPTQ /
GPTQModel `pack`, AutoAWQ WQLinear_GEMM `from_linear`, compressed-tensors float-quantized), the
embeddings, norms and lm_head left float as those tools leave them. Beside it, dequantized.json
holds, for every quantized layer, the shape and the FNV-1a 64 hash of its float32 weight [out, in]
computed from the integers before packing (w = float32(q - zero) * float32(scale), or
e4m3(q) * scale), which the C++ tests compare bit for bit with izwi's unpacking (a hash, not the
weights: the fixtures travel to GPU machines whose transfer is limited). The script also unpacks its own packing and checks it against the integers.

Weights are rounded to nearest (no Hessian: the packing, not GPTQ's error feedback, is under test);
act-order uses a seeded random permutation in place of the Hessian's, one per layer input as in GPTQ
(q, k and v see the same input, so the same Hessian and permutation; gate and up too).

  python3 scripts/make_quantized_fixtures.py                # rewrites tests/data/llama-tiny-{gptq,...}
  python3 scripts/make_quantized_fixtures.py --fuzz-corpus  # tests/fuzz/corpus/quantized_checkpoint/
Needs numpy (Debian: python3-numpy, which cmake/install_deps.sh installs).
"""

import json
import os
import struct
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")
SOURCE = "llama-tiny"
GROUP = 32
LINEAR = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
          "mlp.up_proj", "mlp.down_proj")

ST_DTYPES = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64, "U8": np.uint8,
             "F8_E4M3": np.uint8}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[base + b:base + end], dtype=ST_DTYPES[e["dtype"]]).reshape(e["shape"]).copy()
    return out


def write_safetensors(path, tensors):
    """tensors: name -> (safetensors dtype, array)."""
    with open(path, "wb") as f:
        f.write(safetensors_bytes(tensors))


def safetensors_bytes(tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, a = tensors[name]
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# --- int4 ----------------------------------------------------------------------------------------

def quantize_int4(w, group_of_column, groups, sym):
    """w float32 [out, in]; returns q uint8 [out, in], zeros uint8 [groups, out], scales f16 [groups, out]."""
    out_features = w.shape[0]
    scales = np.zeros((groups, out_features), np.float16)
    zeros = np.zeros((groups, out_features), np.int64)
    q = np.zeros(w.shape, np.int64)
    for g in range(groups):
        cols = np.nonzero(group_of_column == g)[0]
        x = w[:, cols].astype(np.float64)
        # GPTQ's Quantizer.find_params: the range always includes 0.
        xmin = np.minimum(x.min(axis=1), 0)
        xmax = np.maximum(x.max(axis=1), 0)
        if sym:
            xmax = np.maximum(-xmin, xmax)
            xmin = -xmax
        scale = ((xmax - xmin) / 15).astype(np.float16)
        zero = np.full(out_features, 8) if sym else np.round(-xmin / scale.astype(np.float64)).astype(np.int64)
        scales[g] = scale
        zeros[g] = zero
        q[:, cols] = np.clip(np.round(x / scale.astype(np.float64)[:, None]) + zero[:, None], 0, 15)
    return q.astype(np.uint8), zeros.astype(np.uint8), scales


def dequantize_int4(q, zeros, scales, group_of_column):
    z = zeros[group_of_column].T.astype(np.float32)  # [out, in]
    s = scales[group_of_column].T.astype(np.float32)
    return (q.astype(np.float32) - z) * s


def pack_words(nibbles, order):
    """uint [..., 8 n] -> int32 [..., n]: value 8k + order[i] at bits [4 i, 4 i + 4) of word k."""
    n = nibbles.shape[-1] // 8
    words = np.zeros(nibbles.shape[:-1] + (n,), np.uint32)
    for i, src in enumerate(order):
        words |= (nibbles[..., src::8].astype(np.uint32) & 0xF) << np.uint32(4 * i)
    return words.view(np.int32)


def unpack_words(words, order):
    out = np.zeros(words.shape[:-1] + (words.shape[-1] * 8,), np.uint8)
    w = words.view(np.uint32)
    for i, dst in enumerate(order):
        out[..., dst::8] = (w >> np.uint32(4 * i)) & 0xF
    return out


SEQUENTIAL = list(range(8))
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # AutoAWQ's order_map


def gptq_layer(w, perm, sym, v1, group=GROUP):
    """perm: act-order's column order (argsort(-diag(H))), or None."""
    out_features, in_features = w.shape
    groups = in_features // group
    if perm is not None:
        g_idx = np.zeros(in_features, np.int32)
        g_idx[perm] = np.arange(in_features) // group
    else:
        g_idx = (np.arange(in_features) // group).astype(np.int32)
    q, zeros, scales = quantize_int4(w, g_idx, groups, sym)
    if v1:
        assert zeros.min() >= 1, "a zero point of 0 cannot be stored in the gptq v1 format"
    stored_zeros = zeros.astype(np.int64) - (1 if v1 else 0)
    qweight = pack_words(q, SEQUENTIAL).T.copy()  # [in/8, out]: 8 input rows per word
    qzeros = pack_words(stored_zeros, SEQUENTIAL)  # [groups, out/8]
    assert (unpack_words(qweight.T.copy(), SEQUENTIAL) == q).all()
    assert (unpack_words(qzeros, SEQUENTIAL).astype(np.int64) + (1 if v1 else 0) == zeros).all()
    tensors = {"qweight": ("I32", qweight), "qzeros": ("I32", qzeros), "scales": ("F16", scales),
               "g_idx": ("I32", g_idx)}
    return tensors, dequantize_int4(q, zeros, scales, g_idx)


def awq_layer(w):
    in_features = w.shape[1]
    group_of_column = np.arange(in_features) // GROUP
    q, zeros, scales = quantize_int4(w, group_of_column, in_features // GROUP, sym=False)
    qweight = pack_words(q.T.copy(), AWQ_ORDER)  # [in, out/8]
    qzeros = pack_words(zeros, AWQ_ORDER)  # [groups, out/8]
    assert (unpack_words(qweight, AWQ_ORDER) == q.T).all()
    assert (unpack_words(qzeros, AWQ_ORDER) == zeros).all()
    tensors = {"qweight": ("I32", qweight), "qzeros": ("I32", qzeros), "scales": ("F16", scales)}
    return tensors, dequantize_int4(q, zeros, scales, group_of_column)


# --- fp8 e4m3fn ----------------------------------------------------------------------------------

def e4m3_values():
    """Float value of every byte (NaN for 0x7f and 0xff), from the format's definition."""
    v = np.zeros(256, np.float64)
    for b in range(256):
        e, m = (b >> 3) & 15, b & 7
        if e == 15 and m == 7:
            v[b] = np.nan
        elif e == 0:
            v[b] = m / 8 * 2.0 ** -6
        else:
            v[b] = (1 + m / 8) * 2.0 ** (e - 7)
        if b & 0x80:
            v[b] = -v[b]
    return v


def fp8_layer(w, per_channel):
    values = e4m3_values()
    finite = np.nonzero(~np.isnan(values))[0]
    amax = np.abs(w).max(axis=1, keepdims=True) if per_channel else np.abs(w).max().reshape(1, 1)
    scale = (amax / 448.0).astype(np.float32)
    x = w.astype(np.float64) / scale.astype(np.float64)
    # Nearest e4m3 value (ties to the lower byte; any rounding is a valid checkpoint).
    nearest = np.abs(x[..., None] - values[finite][None, None, :]).argmin(axis=-1)
    q = finite[nearest].astype(np.uint8)
    deq = values[q].astype(np.float32) * np.broadcast_to(scale, w.shape).astype(np.float32)
    stored_scale = scale if per_channel else scale.reshape(1)
    return {"weight": ("F8_E4M3", q), "weight_scale": ("F32", stored_scale)}, deq


# --- fixtures ------------------------------------------------------------------------------------

FIXTURES = {
    "llama-tiny-gptq": {"quant_method": "gptq", "bits": 4, "group_size": GROUP, "desc_act": False, "sym": True,
                        "checkpoint_format": "gptq", "damp_percent": 0.01, "true_sequential": True},
    "llama-tiny-gptq-act-order": {"quant_method": "gptq", "bits": 4, "group_size": GROUP, "desc_act": True,
                                  "sym": False, "checkpoint_format": "gptq", "damp_percent": 0.01,
                                  "true_sequential": True},
    "llama-tiny-awq": {"quant_method": "awq", "bits": 4, "group_size": GROUP, "version": "gemm", "zero_point": True,
                       "modules_to_not_convert": None},
    "llama-tiny-fp8": {"quant_method": "compressed-tensors", "format": "float-quantized",
                       "quantization_status": "compressed", "ignore": ["lm_head"], "kv_cache_scheme": None,
                       "config_groups": {"group_0": {
                           "targets": ["Linear"],
                           "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True,
                                       "dynamic": False, "group_size": None, "block_structure": None},
                           "input_activations": {"num_bits": 8, "type": "float", "strategy": "token",
                                                 "symmetric": True, "dynamic": True},
                           "output_activations": None}}},
}


# Projections that read the same input share GPTQ's Hessian, hence its act-order permutation.
SAME_INPUT = {"self_attn.q_proj": "attn", "self_attn.k_proj": "attn", "self_attn.v_proj": "attn",
              "self_attn.o_proj": "o", "mlp.gate_proj": "mlp", "mlp.up_proj": "mlp", "mlp.down_proj": "down"}


def fnv1a64(array):
    """FNV-1a 64 over the float32 little-endian bytes of `array` (row-major)."""
    h = 0xCBF29CE484222325
    for byte in np.ascontiguousarray(array, dtype="<f4").tobytes():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def make(name, quantization_config, source, config):
    folder = os.path.join(DATA, name)
    os.makedirs(folder, exist_ok=True)
    tensors, dequantized, perms = {}, {}, {}
    rng = np.random.default_rng(40)
    for key, value in source.items():
        prefix = key[:-len(".weight")]
        if key.endswith(".weight") and prefix.split(".", 3)[-1] in LINEAR:
            w = value.astype(np.float32)
            method = quantization_config["quant_method"]
            if method == "gptq":
                perm = None
                if quantization_config["desc_act"]:
                    layer, projection = prefix.split(".", 3)[2:]
                    if (layer, SAME_INPUT[projection]) not in perms:
                        perms[layer, SAME_INPUT[projection]] = rng.permutation(w.shape[1])
                    perm = perms[layer, SAME_INPUT[projection]]
                packed, deq = gptq_layer(w, perm, quantization_config["sym"],
                                         quantization_config["checkpoint_format"] == "gptq")
            elif method == "awq":
                packed, deq = awq_layer(w)
            else:
                packed, deq = fp8_layer(w, per_channel=True)
            for suffix, t in packed.items():
                tensors[prefix + "." + suffix] = t
            dequantized[key] = {"shape": list(deq.shape), "fnv1a64": fnv1a64(deq)}
        else:
            tensors[key] = ("F32", value)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    with open(os.path.join(folder, "dequantized.json"), "w") as f:
        json.dump(dequantized, f, indent=2, sort_keys=True)
        f.write("\n")
    config = dict(config, quantization_config=quantization_config)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(DATA, SOURCE, "generation_config.json")) as src:
        with open(os.path.join(folder, "generation_config.json"), "w") as dst:
            dst.write(src.read())
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: {len(dequantized)} quantized layers, {size} bytes")


def write_fuzz_corpus():
    """Seeds of tests/fuzz/fuzz_quantized_checkpoint.cpp: a [16, 64] layer "l" in each layout; the
    first byte picks the target's quantization_config (0 GPTQ v1 act-order, 1 GPTQ v2 per channel,
    2 AWQ, 3 FP8)."""
    folder = os.path.join(ROOT, "tests", "fuzz", "corpus", "quantized_checkpoint")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(41)
    w = rng.uniform(-0.3, 0.3, (16, 64)).astype(np.float32)
    seeds = {"gptq_act_order": (0, lambda: gptq_layer(w, rng.permutation(64), sym=False, v1=True)[0]),
             "awq": (2, lambda: awq_layer(w)[0]),
             "fp8": (3, lambda: fp8_layer(w, per_channel=True)[0])}
    for name, (index, layer) in seeds.items():
        tensors = {"l." + suffix: t for suffix, t in layer().items()}
        with open(os.path.join(folder, name), "wb") as f:
            f.write(bytes([index]) + safetensors_bytes(tensors))
    # Per channel: one group spans the row.
    tensors = {"l." + suffix: t for suffix, t in gptq_layer(w, None, sym=True, v1=False, group=64)[0].items()}
    with open(os.path.join(folder, "gptq_v2_per_channel"), "wb") as f:
        f.write(bytes([1]) + safetensors_bytes(tensors))
    print(f"{folder}: {len(seeds) + 1} seeds")


def main():
    if sys.argv[1:] == ["--fuzz-corpus"]:
        write_fuzz_corpus()
        return 0
    source = read_safetensors(os.path.join(DATA, SOURCE, "model.safetensors"))
    with open(os.path.join(DATA, SOURCE, "config.json")) as f:
        config = json.load(f)
    for name, quantization_config in FIXTURES.items():
        make(name, quantization_config, source, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
