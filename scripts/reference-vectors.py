#!/usr/bin/env python3
"""Reference sentence vectors for groundcite-embed, computed independently of candle.

A BERT forward pass written out in numpy (float64), fed by the `tokenizers`
and `safetensors` Python packages, followed by what sentence-transformers
does for a model folder like all-MiniLM-L6-v2: truncate at max_seq_length
(sentence_bert_config.json), mean-pool the last hidden states over the
attention mask (1_Pooling/config.json), L2-normalise (the Normalize module
in modules.json). Texts are run one at a time, so there is no padding.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy safetensors tokenizers
    /tmp/ref/bin/python scripts/reference-vectors.py MODEL_DIR > crates/embed/tests/fixtures/minilm-reference.json

The cosines of the sentence-transformers README example (0.6660, 0.1046,
0.1411 for all-MiniLM-L6-v2) are printed to stderr and stored in the
fixture, so the fixture is tied to sentence-transformers itself.
"""

import hashlib
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

# Texts of the fixture: the sentence-transformers README example, a pair
# with a near paraphrase, non-ASCII text (accents, CJK, emoji, a combining
# mark), an empty string, and a text far longer than max_seq_length.
LONG = " ".join(
    f"Section {i}: the text-to-speech engine reads paragraph {i} aloud at the configured rate."
    for i in range(1, 41)
)
TEXTS = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "Crème brûlée à Zürich — naïve café, 東京の天気は晴れです 😀, e\u0301",
    "",
    LONG,
]
# (a, b, cosine printed by sentence-transformers' README for all-MiniLM-L6-v2)
PAIRS = [(0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411), (3, 4, None)]


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_erf = np.vectorize(math.erf)


def gelu(x):
    # BERT's "gelu" is the exact, erf-based one.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def linear(x, w, prefix):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def forward(w, config, ids, type_ids):
    n = len(ids)
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config["layer_norm_eps"]
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][type_ids]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def split(t):
            return t.reshape(n, heads, head_dim).transpose(1, 0, 2)

        q = split(linear(x, w, p + "attention.self.query"))
        k = split(linear(x, w, p + "attention.self.key"))
        v = split(linear(x, w, p + "attention.self.value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs = probs / probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        attention = linear(context, w, p + "attention.output.dense")
        x = layer_norm(
            attention + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        intermediate = gelu(linear(x, w, p + "intermediate.dense"))
        output = linear(intermediate, w, p + "output.dense")
        x = layer_norm(
            output + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps
        )
    return x


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: reference-vectors.py MODEL_DIR")
    model_dir = sys.argv[1]
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    assert config["model_type"] == "bert" and config["hidden_act"] == "gelu", config
    with open(os.path.join(model_dir, "sentence_bert_config.json")) as f:
        max_seq_length = json.load(f)["max_seq_length"]
    with open(os.path.join(model_dir, "1_Pooling", "config.json")) as f:
        pooling = json.load(f)
    assert pooling["pooling_mode_mean_tokens"] and not pooling["pooling_mode_cls_token"], pooling
    with open(os.path.join(model_dir, "modules.json")) as f:
        modules = [m["type"] for m in json.load(f)]
    assert modules[-1] == "sentence_transformers.models.Normalize", modules

    weights = {
        k.removeprefix("bert."): v.astype(np.float64)
        for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()
    }
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_seq_length)

    cases = []
    vectors = []
    for text in TEXTS:
        encoding = tokenizer.encode(text)
        hidden = forward(weights, config, encoding.ids, encoding.type_ids)
        mask = np.array(encoding.attention_mask, dtype=np.float64)[:, None]
        pooled = (hidden * mask).sum(axis=0) / max(mask.sum(), 1e-9)
        vector = pooled / max(np.linalg.norm(pooled), 1e-12)
        vectors.append(vector)
        cases.append(
            {
                "text": text,
                "n_tokens": len(encoding.ids),
                "vector": [round(float(c), 7) for c in vector],
            }
        )

    pairs = []
    for a, b, expected in PAIRS:
        cosine = float(vectors[a] @ vectors[b])
        pairs.append({"a": a, "b": b, "cosine": round(cosine, 6), "sentence_transformers": expected})
        print(f"cos({TEXTS[a]!r}, {TEXTS[b]!r}) = {cosine:.4f}"
              + ("" if expected is None else f" (sentence-transformers: {expected:.4f})"),
              file=sys.stderr)
        if expected is not None and abs(cosine - expected) > 5e-5:
            sys.exit(f"reference disagrees with sentence-transformers: {cosine:.6f} vs {expected}")

    fixture = {
        "about": "Reference vectors of all-MiniLM-L6-v2 made by scripts/reference-vectors.py "
        "(numpy float64 forward pass, mean pooling over the attention mask, L2 normalisation).",
        "model_sha256": sha256(os.path.join(model_dir, "model.safetensors")),
        "max_seq_length": max_seq_length,
        "cases": cases,
        "pairs": pairs,
    }
    json.dump(fixture, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
