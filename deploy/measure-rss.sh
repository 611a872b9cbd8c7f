#!/usr/bin/env bash
# Peak and settled resident memory of each `dicestream serve` process under a tournament, for the
# resource figures in deploy/README.md ("Sizing"). Starts its own redis-server on a free loopback
# port (no persistence) in a temporary directory and removes it at the end; touches nothing else.
#   deploy/measure-rss.sh [GAMES] [GAME]          # default: 200 sentient games, 2-4 players
set -euo pipefail
cd "$(dirname "$0")/.."
GAMES=${1:-200}
GAME=${2:-sentient}
DS=${DICESTREAM:-.venv/bin/dicestream}
REDIS=${REDIS_SERVER:-/usr/bin/redis-server}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$REDIS" --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no --daemonize yes \
  --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
  sleep 0.5
  rm -rf "$dir"
}
trap cleanup EXIT
export REDIS_URL="redis://127.0.0.1:$port/0" DICESTREAM_SHARDS=64 DICESTREAM_LOG_LEVEL=warning
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
names=(referee projector turns botrunner)
hp=9400
for n in "${names[@]}"; do
  hp=$((hp + 1))
  DICESTREAM_CONSUMER="rss-$n" DICESTREAM_HEALTH_ADDR="127.0.0.1:$hp" "$DS" serve "$n" >"$dir/$n.log" 2>&1 &
  pids+=("$!")
done
# Ready: every process answers /readyz with 200.
for i in $(seq 1 100); do
  ok=0; hp=9400
  for n in "${names[@]}"; do
    hp=$((hp + 1))
    python3 -c "import sys,urllib.request; urllib.request.urlopen('http://127.0.0.1:$hp/readyz', timeout=1)" 2>/dev/null && ok=$((ok + 1))
  done
  [ "$ok" = "${#names[@]}" ] && break
  sleep 0.2
done
sleep 2
echo "idle (kB VmRSS): $(for i in "${!names[@]}"; do printf '%s=%s ' "${names[$i]}" "$(rss "${pids[$i]}")"; done)"
start=$(date +%s)
DICESTREAM_CONSUMER=rss-tournament "$DS" tournament --game "$GAME" --games "$GAMES" --players 2,3,4 >"$dir/tournament.log" 2>&1
echo "tournament of $GAMES $GAME games: $(( $(date +%s) - start )) s, $(grep -c . "$dir/tournament.log") lines of output"
echo "after (kB VmRSS): $(for i in "${!names[@]}"; do printf '%s=%s ' "${names[$i]}" "$(rss "${pids[$i]}")"; done)"
echo "peak (kB VmHWM): $(for i in "${!names[@]}"; do printf '%s=%s ' "${names[$i]}" "$(hwm "${pids[$i]}")"; done)"
echo "cpu (s user+sys): $(for i in "${!names[@]}"; do printf '%s=%s ' "${names[$i]}" "$(awk '{printf "%.2f", ($14+$15)/100}' "/proc/${pids[$i]}/stat")"; done)"
