# Sourced by the bench/ scripts over bench/synth.py's synthetic corpora:
#   synth_corpus PAGES DIR   writes the corpus of PAGES pages into DIR unless
#                            a complete one is there (kept and reused: 1M
#                            chunks is 0.9 GB and takes minutes to write).
synth_corpus() {
  local pages=$1 dir=$2
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    python3 bench/synth.py "$pages" "$dir"
    touch "$dir/.complete"
  fi
}
