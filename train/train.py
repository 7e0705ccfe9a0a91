"""Fine-tunes groundcite's judges: one cross-encoder, two heads.

The encoder starts from all-MiniLM-L6-v2 (the embedding model groundcite
already fetches); its word embeddings stay frozen and are not shipped, so
the released file holds only what training changed. Heads, on the pooled
[CLS] state:

- `head.answer` (1 logit): does the second text answer the first (a question)?
- `head.support` (3 logits: entailed, neutral, contradicted): does the first
  text (a passage window) say the second (a claim)?

Writes to --out: `judges.safetensors` (fp16; every tensor but
`embeddings.word_embeddings.weight`), `config.json` (the base's BERT
config and the judges' settings) and `manifest.json` (base model and its
checksum, training data checksums, the git commit, hyper-parameters, the
held-back accuracy, the SHA-256 of every file written).

Deterministic for a given --seed on one machine (one thread count).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from transformers import AutoModel, AutoTokenizer

from data import sha256

SUPPORT_LABELS = ["entailed", "neutral", "contradicted"]
FROZEN = "embeddings.word_embeddings.weight"


class Judges(torch.nn.Module):
    def __init__(self, base: Path):
        super().__init__()
        self.bert = AutoModel.from_pretrained(str(base), add_pooling_layer=True)
        hidden = self.bert.config.hidden_size
        self.answer = torch.nn.Linear(hidden, 1)
        self.support = torch.nn.Linear(hidden, len(SUPPORT_LABELS))
        self.dropout = torch.nn.Dropout(0.1)
        self.bert.embeddings.word_embeddings.weight.requires_grad_(False)

    def forward(self, batch, task: str):
        out = self.bert(**batch)
        pooled = self.dropout(out.pooler_output)
        if task == "answer":
            return self.answer(pooled).squeeze(-1)
        return self.support(pooled)


def read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def batches(rows: list[dict], tokenizer, max_len: int, size: int, rng: random.Random) -> list:
    """Batches of one task, of similar lengths (little padding), in a shuffled order, all
    tokenized up front (a pair the tokenizer refuses fails before any training)."""
    by_task: dict[str, list[dict]] = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    out = []
    for task, items in by_task.items():
        lengths = [len(r["a"]) + len(r["b"]) for r in items]
        order = sorted(range(len(items)), key=lambda i: (lengths[i], i))
        for start in range(0, len(order), size):
            out.append((task, [items[i] for i in order[start:start + size]]))
    rng.shuffle(out)
    encoded = []
    for task, items in out:
        # The longer text loses tokens first: the premise, nearly always (groundcite-embed
        # truncates the same way).
        enc = tokenizer([r["a"] for r in items], [r["b"] for r in items], truncation="longest_first",
                        max_length=max_len, padding=True, return_tensors="pt")
        labels = torch.tensor([r["label"] for r in items])
        encoded.append((task, enc, labels))
    return encoded


def evaluate(model, rows, tokenizer, max_len) -> dict:
    model.eval()
    right = {"answer": [0, 0], "support": [0, 0]}
    with torch.no_grad():
        for task, enc, labels in batches(rows, tokenizer, max_len, 64, random.Random(0)):
            logits = model(enc, task)
            pred = (logits > 0).long() if task == "answer" else logits.argmax(-1)
            right[task][0] += int((pred == labels).sum())
            right[task][1] += len(labels)
    model.train()
    return {t: round(a / n, 4) if n else None for t, (a, n) in right.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="the all-MiniLM-L6-v2 folder")
    ap.add_argument("--data", type=Path, required=True, help="data.py's output folder")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--max-len", type=int, default=160)
    ap.add_argument("--limit", type=int, default=0, help="use at most this many pairs per task (0: all)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(str(args.base))
    rows = []
    for name in ("support.jsonl", "answer.jsonl"):
        task_rows = read(args.data / name)
        if args.limit:
            task_rows = task_rows[: args.limit]
        rows += task_rows
    rng.shuffle(rows)
    held = rows[: max(50, len(rows) // 25)]
    train = rows[len(held):]

    model = Judges(args.base)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    steps_per_epoch = math.ceil(len(train) / args.batch) + 2
    total = max(1, int(steps_per_epoch * args.epochs))
    warmup = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / max(1, total - warmup)))
    bce = torch.nn.BCEWithLogitsLoss()
    ce = torch.nn.CrossEntropyLoss()
    started = time.time()
    step = 0
    epoch = 0
    print(f"train.py: {len(train)} pairs, {total} steps, held back {len(held)}", flush=True)
    while step < total:
        for task, enc, labels in batches(train, tokenizer, args.max_len, args.batch, random.Random(args.seed + epoch)):
            logits = model(enc, task)
            loss = bce(logits, labels.float()) if task == "answer" else ce(logits, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optim.step()
            sched.step()
            optim.zero_grad()
            step += 1
            if step % 100 == 0:
                rate = step * args.batch / (time.time() - started)
                print(f"step {step}/{total} loss {loss.item():.3f} ({rate:.1f} pairs/s, "
                      f"{(time.time() - started) / 60:.1f} min)", flush=True)
            if step >= total:
                break
        epoch += 1
    minutes = (time.time() - started) / 60
    held_accuracy = evaluate(model, held, tokenizer, args.max_len)
    print(f"train.py: {minutes:.1f} min; held-back accuracy {held_accuracy}", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for name, t in model.bert.state_dict().items():
        if name == FROZEN or name.endswith("position_ids"):
            continue
        tensors[name] = t.detach().to(torch.float16).contiguous()
    tensors["head.answer.weight"] = model.answer.weight.detach().to(torch.float16).contiguous()
    tensors["head.answer.bias"] = model.answer.bias.detach().to(torch.float16).contiguous()
    tensors["head.support.weight"] = model.support.weight.detach().to(torch.float16).contiguous()
    tensors["head.support.bias"] = model.support.bias.detach().to(torch.float16).contiguous()
    save_file(tensors, str(args.out / "judges.safetensors"))

    config = json.loads((args.base / "config.json").read_text())
    config["groundcite_judges"] = {
        "support_labels": SUPPORT_LABELS,
        "max_seq_length": args.max_len,
        "frozen_from_base": [FROZEN],
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    data_manifest = json.loads((args.data / "data-manifest.json").read_text())
    manifest = {
        "model_id": "groundcite-judges-minilm-l6",
        "base_model": "sentence-transformers/all-MiniLM-L6-v2",
        "base_weights_sha256": sha256(args.base / "model.safetensors"),
        "training_commit": commit,
        "data": data_manifest,
        "hyper_parameters": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                             if k not in ("base", "data", "out")},
        "torch": torch.__version__,
        "train_pairs": len(train),
        "minutes": round(minutes, 1),
        "held_back_accuracy": held_accuracy,
        "files": {n: sha256(args.out / n) for n in ("judges.safetensors", "config.json")},
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"train.py: wrote {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
