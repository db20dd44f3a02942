#!/usr/bin/env bash
# CTest: a cluster across hosts, each task in a network namespace of its own with its own IP
# address on a bridge, names resolved through each host's hosts file (/etc/netns/NS/hosts, which
# `ip netns exec` mounts over /etc/hosts), TLS with credentials made by docs/security.md's
# openssl commands. Cases:
#   1. the seed's command lines, 2 ps + 2 workers with real host names, train to accuracy;
#   2. a worker's link cut for 10 s mid-training, then healed: its steps fail within the
#      heartbeat bound, it recovers and the job finishes;
#   3. a ps's link cut for 10 s: every worker's steps fail within the bound, they recover and
#      the job finishes;
#   4. a node asked to listen on an address its host does not have: a clear error, at once.
# Exits 77 (skipped) where network namespaces cannot be made (no root, a sandbox without them).
#   multihost_test.sh TROUPE_CLI
set -euo pipefail
troupe=$(realpath "$1")
if ! ip netns add "probe$$" 2>/dev/null; then
  echo "skipped: network namespaces cannot be made here (needs root and 'ip netns')"
  exit 77
fi
ip netns del "probe$$"

tag=mh$(($$ % 100000))
subnet=10.231.$(($$ % 250))
switch=$tag-sw
hosts=(ps0 ps1 worker0 worker1 stray)
work=$(mktemp -d)
pids=()
log() { echo "multihost: $*"; }
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for host in "${hosts[@]}"; do
    # Whatever still runs on the host (a task outlives its timeout wrapper if that is killed).
    ip netns pids "$tag-$host" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$tag-$host" 2>/dev/null || true
    rm -rf "/etc/netns/$tag-$host"
  done
  ip netns del "$switch" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  log "FAILED: $*"
  for file in "$work"/*.log; do
    echo "== $(basename "$file")"
    tail -n 15 "$file"
  done
  exit 1
}

# The hosts: one namespace each, a veth to the switch's bridge, an address, a hosts file.
ip netns add "$switch"
ip -n "$switch" link add br0 type bridge
ip -n "$switch" link set br0 up
for i in "${!hosts[@]}"; do
  host=${hosts[$i]} ns=$tag-${hosts[$i]}
  ip netns add "$ns"
  ip link add "$tag-v$i" netns "$ns" type veth peer name "port$i" netns "$switch"
  ip -n "$ns" link set "$tag-v$i" name eth0
  ip -n "$ns" addr add "$subnet.$((10 + i))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$switch" link set "port$i" master br0 up
  mkdir -p "/etc/netns/$ns"
  {
    echo "127.0.0.1 localhost"
    for j in "${!hosts[@]}"; do echo "$subnet.$((10 + j)) ${hosts[$j]}"; done
  } >"/etc/netns/$ns/hosts"
done
ip netns exec "$tag-worker0" getent hosts ps1 | grep -q "$subnet.11" ||
  fail "the hosts file is not used for names"

# TLS credentials as docs/security.md makes them: one CA, a certificate for the tasks.
(
  cd "$work"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj '/CN=multihost CA' -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=task' \
    -keyout task.key -out task.csr 2>/dev/null
  openssl x509 -req -in task.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
    -out task.pem 2>/dev/null
  chmod 600 task.key
)
export TROUPE_TLS_CERT=$work/task.pem TROUPE_TLS_KEY=$work/task.key TROUPE_TLS_CA=$work/ca.pem

# start NAME HOST ARGS...: runs `troupe ARGS` on HOST, its output in $work/NAME.log; it is
# ended after 300 s whatever happens to this script (CTest's timeout kills only the script).
start() {
  local name=$1 host=$2
  shift 2
  ip netns exec "$tag-$host" timeout --kill-after=5 300 "$troupe" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  eval "pid_$name=$!"
}
# wait_for NAME REGEX SECONDS
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -Eq "$2" "$work/$1.log"; do
    [ $SECONDS -lt $deadline ] || fail "$1 did not print /$2/ within $3 s"
    sleep 0.2
  done
}
# wait_exit NAME SECONDS: the task's exit code (fails if it runs longer).
wait_exit() {
  local pid_var=pid_$1 deadline=$((SECONDS + $2))
  while kill -0 "${!pid_var}" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "$1 still runs after $2 s"
    sleep 0.2
  done
  wait "${!pid_var}"
}
# seconds_of "YYYY-MM-DD HH:MM:SS.mmm": a log line's time as seconds since the epoch.
seconds_of() { date -d "$1" +%s.%N; }
# A cluster of the seed's command lines: 2 ps + 2 workers, training for $1 epochs into $2.
cluster() {
  local flags=(--ps_hosts=ps0:2222,ps1:2222 --worker_hosts=worker0:2222,worker1:2222)
  start ps0 ps0 train "${flags[@]}" --job_name=ps --task_index=0
  start ps1 ps1 train "${flags[@]}" --job_name=ps --task_index=1
  for w in 0 1; do
    start "worker$w" "worker$w" train "${flags[@]}" --job_name=worker --task_index=$w \
      --epochs="$1" --checkpoint_dir="$2" --save_checkpoint_steps=100
  done
}
# stop_ps: SIGTERM to the ps tasks (timeout passes it on), SIGKILL after 10 s.
stop_ps() {
  local ps pid_var deadline
  for ps in ps0 ps1; do
    pid_var=pid_$ps
    kill -TERM "${!pid_var}" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    while kill -0 "${!pid_var}" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    kill -KILL "${!pid_var}" 2>/dev/null || true
    ip netns pids "$tag-$ps" | xargs -r kill -KILL 2>/dev/null || true
    wait "${!pid_var}" 2>/dev/null || true
  done
}
accuracy_of() { grep -oE 'test accuracy [0-9.]+' "$work/$1.log" | head -1 | awk '{print $3}'; }
# cut_link HOST SECONDS: the host's port on the switch down for that long, from now.
cut_link() {
  local index
  for index in "${!hosts[@]}"; do [ "${hosts[$index]}" = "$1" ] && break; done
  ip -n "$switch" link set "port$index" down
  cut_at=$(date +%s.%N)
  sleep "$2"
  ip -n "$switch" link set "port$index" up
}
# The heartbeat bound (docs/reliability.md: 4 s timeout, 1 s interval), doubled.
bound=10
# detected_within NAME: the first "recovering" line of the task comes within the bound of the cut.
detected_within() {
  local line when
  line=$(grep -m1 'recovering the training session' "$work/$1.log") ||
    fail "$1 never noticed the cut"
  when=$(seconds_of "${line:0:23}")
  awk -v a="$when" -v b="$cut_at" -v bound=$bound 'BEGIN { exit !(a - b >= 0 && a - b <= bound) }' ||
    fail "$1 noticed the cut $(awk -v a="$when" -v b="$cut_at" 'BEGIN { print a - b }') s after it (bound $bound s)"
  log "$1's steps failed $(awk -v a="$when" -v b="$cut_at" 'BEGIN { printf "%.1f", a - b }') s after the cut"
}

log "1. the seed's command lines: 2 ps + 2 workers on 4 hosts, TLS"
cluster 2 "$work/ckpt1"
wait_exit worker0 180 || fail "the chief failed"
wait_exit worker1 60 || fail "worker 1 failed"
stop_ps
accuracy=$(accuracy_of worker0)
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.8) }' || fail "test accuracy '$accuracy' < 0.8"
grep -q "serving at troupe://ps1:2222" "$work/ps1.log" || fail "ps1 did not serve at its name"
log "trained to test accuracy $accuracy"

log "2. worker1's link cut for 10 s mid-training"
cluster 20 "$work/ckpt2"
wait_for worker1 ' at step ' 120
wait_for worker0 '\((1|2|3)[0-9]%\)' 120
cut_link worker1 10
detected_within worker1
wait_exit worker0 180 || fail "the chief failed"
wait_exit worker1 60 || fail "worker 1 failed after the heal"
stop_ps
grep -Eq 'training session recovered|training is done' "$work/worker1.log" ||
  fail "worker 1 did not rejoin"
log "worker1 rejoined; test accuracy $(accuracy_of worker0)"

log "3. ps0's link cut for 10 s mid-training"
cluster 8 "$work/ckpt3"
wait_for worker1 ' at step ' 120
wait_for worker0 '\((1|2|3)[0-9]%\)' 120
cut_link ps0 10
detected_within worker0
detected_within worker1
wait_exit worker0 180 || fail "the chief failed"
wait_exit worker1 60 || fail "worker 1 failed"
stop_ps
grep -q 'training session recovered' "$work/worker0.log" || fail "the chief did not recover"
log "both workers recovered; test accuracy $(accuracy_of worker0)"

log "4. a node asked to listen on an address its host does not have"
start stray stray node --ps_hosts="$subnet.10:2222" --worker_hosts=worker0:2222 --job_name=ps
status=0
wait_exit stray 15 || status=$?
[ "$status" -eq 1 ] || fail "exit code $status (expected 1)"
grep -q "cannot listen on $subnet.10:2222" "$work/stray.log" || fail "no clear error"
log "$(grep -m1 'cannot listen' "$work/stray.log")"
log "ok"
