# Sourced by the bench/ scripts that drive the `groundcite` binary: builds it
# (PROFILE=debug, the default, is what CI has built anyway; or release) and
# exports GROUNDCITE_BIN, absolute, since servers run in their own folders.
profile=${PROFILE:-debug}
if [ "$profile" = release ]; then
  cargo build -q --release -p groundcite
else
  cargo build -q -p groundcite
fi
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export GROUNDCITE_BIN="$target_dir/$profile/groundcite"
