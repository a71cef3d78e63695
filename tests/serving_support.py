"""Clusters and models shared by the tests of lib.serving (tests/unit/lib/serving)."""

from __future__ import annotations

from lib.serving import Cluster
from lib.transformer import PRESETS

H100 = Cluster("h100-sxm")
#: An engine at the roofline: full efficiency, no fixed costs (the hand-worked cases).
IDEAL = dict(memory_efficiency=1.0, compute_efficiency=1.0, layer_overhead=0.0, step_overhead=0.0)
DEEPSEEK = PRESETS["deepseek-v3"]

#: Qwen2.5-32B's config.json as Hugging Face publishes it (the fields the planner reads).
QWEN25_32B = {
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 5120,
    "intermediate_size": 27648,
    "num_attention_heads": 40,
    "num_hidden_layers": 64,
    "num_key_value_heads": 8,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "hidden_act": "silu",
    "model_type": "qwen2",
}
