"""Reference outputs of trained judges, computed with PyTorch from the released files.

Loads `judges.safetensors` (fp16) over the base model's word embeddings, as
groundcite-embed does, runs a few fixed pairs through both heads and writes
`reference.json` into the judges folder. The Rust test
`crates/embed/tests/judges.rs` loads the same files with candle and must
reproduce these probabilities.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer

ANSWER_PAIRS = [
    ("How long do reimbursements take to settle?",
     "Reimbursements settle within 30 days of approval."),
    ("How long do reimbursements take to settle?",
     "Receipts must be kept for one year."),
    ("Who approves travel?", "Only managers approve travel requests."),
]
SUPPORT_PAIRS = [
    ("Reimbursements settle within 30 days of approval.",
     "Reimbursements are settled within 30 days once approved."),
    ("Reimbursements settle within 30 days of approval.",
     "Reimbursements settle within 90 days of approval."),
    ("Only managers approve travel requests.", "Employees approve their own travel requests."),
    ("The office opened in 1998 in Denver.", "The office has a cafeteria on the third floor."),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--judges", type=Path, required=True)
    args = ap.parse_args()
    config = json.loads((args.judges / "config.json").read_text())
    max_len = config["groundcite_judges"]["max_seq_length"]
    tokenizer = AutoTokenizer.from_pretrained(str(args.base))
    bert = AutoModel.from_pretrained(str(args.base), add_pooling_layer=True)
    tensors = {k: v.float() for k, v in load_file(str(args.judges / "judges.safetensors")).items()}
    heads = {k: tensors.pop(k) for k in list(tensors) if k.startswith("head.")}
    missing, unexpected = bert.load_state_dict(tensors, strict=False)
    if unexpected or [m for m in missing if m not in ("embeddings.word_embeddings.weight", "embeddings.position_ids")]:
        print(f"reference.py: unexpected {unexpected}, missing {missing}", file=sys.stderr)
        return 1
    bert.eval()

    def run(pairs, head):
        enc = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
                        max_length=max_len, padding=True, return_tensors="pt")
        with torch.no_grad():
            pooled = bert(**enc).pooler_output
            return pooled @ heads[f"head.{head}.weight"].T + heads[f"head.{head}.bias"]

    answer = torch.sigmoid(run(ANSWER_PAIRS, "answer")).squeeze(-1).tolist()
    support = torch.softmax(run(SUPPORT_PAIRS, "support"), dim=-1).tolist()
    out = {
        "answer": [{"question": q, "sentence": s, "probability": round(p, 5)}
                   for (q, s), p in zip(ANSWER_PAIRS, answer)],
        "support": [{"passage": a, "claim": b, "probabilities": [round(x, 5) for x in p]}
                    for (a, b), p in zip(SUPPORT_PAIRS, support)],
    }
    (args.judges / "reference.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
