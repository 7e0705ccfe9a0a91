# Sourced by the bench/ scripts that measure a running `groundcite serve`:
#   start_serve BIN LOG ARGS...   starts `BIN ARGS... serve` on a free
#                                 loopback port (--no-audit), output to LOG,
#                                 and waits (up to 60 s) for /healthz; sets
#                                 `port` and `server_pid`.
#   peak_rss_mb                   the server's peak resident memory (VmHWM).
#   stop_serve                    stops the server started last, if any, and
#                                 waits for it (also right for an EXIT trap).
start_serve() {
  local bin=$1 log=$2
  shift 2
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bin" "$@" serve --addr "127.0.0.1:$port" --no-audit > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 600); do
    curl -fs "http://127.0.0.1:$port/healthz" > /dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { tail -n 20 "$log" >&2; echo "serve exited" >&2; return 1; }
    sleep 0.1
  done
  echo "serve did not answer /healthz within 60 s" >&2
  return 1
}

peak_rss_mb() {
  awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server_pid/status"
}

server_pid=
stop_serve() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
