#!/usr/bin/env python3
"""The same work as izwi-bench, in Hugging Face transformers on the same GPU: the baseline of
scripts/gpu_check.sh. The model is built from a folder's config.json (izwi-make-checkpoint writes
one per shape preset) with random bf16 weights; greedy generation of fixed lengths with
transformers' default generate (sdpa attention). Prints one JSON line per measurement.

  transformers_baseline.py --model DIR --prompt-len 128 --gen 128 --concurrency 1,16,128 [--prefill-len 4096]
"""
import argparse
import json
import time

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="folder with the config.json to build the model from")
    parser.add_argument("--prompt-len", type=int, default=128)
    parser.add_argument("--gen", type=int, default=128)
    parser.add_argument("--concurrency", default="1,16,128")
    parser.add_argument("--prefill-len", type=int, default=0, help="prompt length of a TTFT run; 0 = none")
    args = parser.parse_args()

    config = AutoConfig.from_pretrained(args.model)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # the weights' dtype, whichever keyword this version takes
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config).eval()
    torch.set_default_dtype(torch.float32)
    vocab = config.vocab_size
    print(json.dumps({"system": "transformers", "model": args.model, "torch": torch.__version__,
                      "transformers": transformers.__version__,
                      "attention": getattr(model.config, "_attn_implementation", "?"),
                      "parameters": sum(p.numel() for p in model.parameters())}), flush=True)

    def generate(batch, prompt_len, new_tokens):
        ids = torch.randint(3, vocab, (batch, prompt_len), device="cuda")
        kwargs = dict(attention_mask=torch.ones_like(ids), do_sample=False, pad_token_id=0, eos_token_id=None,
                      max_new_tokens=new_tokens, min_new_tokens=new_tokens)
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(ids, **kwargs)
        torch.cuda.synchronize()
        return time.perf_counter() - start, out.shape[1] - prompt_len

    for batch in [int(c) for c in args.concurrency.split(",")]:
        generate(batch, args.prompt_len, 4)  # warm-up
        first_s, _ = generate(batch, args.prompt_len, 1)
        total_s, generated = generate(batch, args.prompt_len, args.gen)
        decode_s = total_s - first_s
        print(json.dumps({"system": "transformers", "concurrency": batch, "prompt_len": args.prompt_len,
                          "gen": int(generated), "ttft_ms": round(first_s * 1e3, 2),
                          "wall_tokens_per_s": round(batch * generated / total_s, 1),
                          "tokens_per_s": round(batch * (generated - 1) / decode_s, 1)}), flush=True)
    if args.prefill_len > 0:
        generate(1, args.prefill_len, 1)  # warm-up at that length
        ttft_s, _ = generate(1, args.prefill_len, 1)
        print(json.dumps({"system": "transformers", "prefill_len": args.prefill_len,
                          "ttft_ms": round(ttft_s * 1e3, 2)}), flush=True)


if __name__ == "__main__":
    main()
