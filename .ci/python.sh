#!/usr/bin/env bash
# The Python package, as CI runs it: build the wheel from
# python/ with maturin, install it into a fresh virtual environment, run the
# pytest suite (python/tests), check the type stubs against the module
# (mypy's stubtest) and the tests against the stubs, then the examples in their own environment
# (python/examples/run.sh: the OpenAI SDK, LlamaIndex and LangChain against
# a loopback OpenAI-compatible server).
#
#   .ci/python.sh
#
# The wheel is built with the dev profile into the workspace's target
# directory, so it reuses the dependencies `cargo test --workspace` just
# compiled (python/Cargo.lock starts as a copy of Cargo.lock; about 30 s
# instead of a release build of everything). GROUNDCITE_BIN (default
# target/debug/groundcite) is the CLI the reports are compared with.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
venv="$target_dir/py-venv"
wheels="$target_dir/wheels-ci"

started=$SECONDS
rm -rf "$venv" "$wheels"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "maturin==1.16.0" "pytest==9.2.0" "mypy==2.4.1"
echo "python: fresh venv with maturin, pytest and mypy in $((SECONDS - started)) s"

started=$SECONDS
(cd python && CARGO_TARGET_DIR="$target_dir" "$venv/bin/maturin" build --profile dev \
  -i "$venv/bin/python" --out "$wheels" 2>&1 | grep -E "^(error|warning)|Built wheel" || true)
wheel=$(ls "$wheels"/groundcite-*.whl)
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
echo "python: built and installed $(basename "$wheel") in $((SECONDS - started)) s"

started=$SECONDS
# Run from outside the source tree, so the installed package is tested (not
# python/groundcite, which has no compiled half).
(cd "$target_dir" && GROUNDCITE_BIN="${GROUNDCITE_BIN:-$target_dir/debug/groundcite}" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests")
echo "python: pytest in $((SECONDS - started)) s"

started=$SECONDS
# The type stubs say what the compiled module has (stubtest imports it and
# compares every class, method and argument), and the tests type-check
# against them.
(cd "$target_dir" && "$venv/bin/python" -m mypy.stubtest groundcite)
"$venv/bin/python" -m mypy --strict --no-incremental python/tests
echo "python: stubtest and mypy in $((SECONDS - started)) s"

started=$SECONDS
GROUNDCITE_WHEEL="$wheel" python/examples/run.sh "$target_dir/py-examples-venv"
echo "python: examples in $((SECONDS - started)) s"
