#!/usr/bin/env bash
# Trains the tiny SentencePiece BPE model of this folder with Debian's spm_train (package
# `sentencepiece`, 0.1.97) and writes reference.json with spm_encode's ids for each case.
# Llama 2 style options: byte_fallback, digits split, no normalisation, whitespace kept, <unk>/<s>/</s> as ids 0/1/2.
set -euo pipefail
cd "$(dirname "$0")"
corpus=$(mktemp)
python3 -c "import sys; sys.path.insert(0, '../tokenizer-hf-components'); import make_tokenizers as m; print(m.CORPUS)" > "$corpus"
spm_train --input="$corpus" --model_prefix=tokenizer --vocab_size=700 --model_type=bpe --byte_fallback=true \
  --split_digits=true --character_coverage=0.995 --normalization_rule_name=identity \
  --remove_extra_whitespaces=false --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 \
  --minloglevel=2 > /dev/null 2>&1
rm -f tokenizer.vocab "$corpus"
python3 - <<'PY'
import json, subprocess
cases = json.load(open("cases.json"))
out = []
for text in cases:
    r = subprocess.run(["spm_encode", "--model=tokenizer.model", "--output_format=id"], input=text + "\n",
                       capture_output=True, text=True, check=True)
    ids = [int(x) for x in r.stdout.split()]
    out.append({"text": text, "ids": ids})
json.dump({"reference": "spm_encode (Debian sentencepiece 0.1.97)", "cases": out}, open("reference.json", "w"),
          ensure_ascii=False, indent=1)
PY
