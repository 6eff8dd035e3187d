#pragma once
// Kyutai's moshi library names Mimi's tensors differently from transformers' MimiModel (the
// checkpoint LFM2-Audio ships, `tokenizer-*.safetensors`, and the Qwen3-TTS speech tokenizer's
// quantizer use them). izwi's codec code asks for transformers' names; this maps a moshi name to
// its transformers one, as transformers' convert_mimi_checkpoint_to_pytorch.py does. The packed
// attention projection `self_attn.in_proj_weight` keeps its name (windowed_transformer.cpp splits it).

#include <string>

namespace izwi {

std::string moshi_to_transformers_mimi_name(const std::string& name);

}  // namespace izwi
