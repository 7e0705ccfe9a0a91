"""The PyTorch half of bench/embed-side-by-side.sh: sentence-transformers
embeds the same texts (one JSON string a line) with the same model folder on
the CPU, and prints texts per second.

    python bench/embed_pytorch.py MODEL_DIR TEXTS.jsonl THREADS [VECTORS.f32]

With a fourth path it writes the vectors (float32, row after row, in input
order), and with EMBED_VECTORS=path (groundcite's vectors of the same
texts) it prints the cosine between the two runtimes' vectors.
"""
import json
import os
import sys
import time

import numpy as np
import torch
from sentence_transformers import SentenceTransformer


def main():
    model_dir, texts_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    out = sys.argv[4] if len(sys.argv) > 4 else None
    torch.set_num_threads(threads)
    with open(texts_path, encoding="utf-8") as f:
        texts = [json.loads(line) for line in f if line.strip()]
    model = SentenceTransformer(model_dir, device="cpu")
    started = time.perf_counter()
    vectors = model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    secs = time.perf_counter() - started
    print(f"sentence-transformers (PyTorch {torch.__version__}, {threads} threads): "
          f"{len(texts)} texts in {secs:.1f} s, {len(texts) / secs:.1f} texts/s")
    if out:
        vectors.astype("<f4").tofile(out)
    ours = os.environ.get("EMBED_VECTORS")
    if ours:
        theirs = np.fromfile(ours, dtype="<f4").reshape(vectors.shape)
        cos = (theirs * vectors).sum(axis=1)
        print(f"cosine between the two runtimes' vectors: mean {cos.mean():.5f}, minimum {cos.min():.5f}")


if __name__ == "__main__":
    main()
