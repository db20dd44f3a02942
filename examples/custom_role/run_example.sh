#!/usr/bin/env bash
# Runs the example as its user would: a counter node on a free loopback port, then the client,
# which must get each text's word count back; then the node is stopped with SIGTERM and must
# exit 0. Plain TCP (--insecure) on loopback; across machines give both TLS credentials
# (TROUPE_TLS_CERT/KEY/CA, docs/security.md).
set -euo pipefail
node_bin=$1 client_bin=$2
dir=$(mktemp -d)
node_pid=
cleanup() {
  [ -z "$node_pid" ] || kill -KILL "$node_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
cat > "$dir/cluster.json" <<JSON
{"counter": ["127.0.0.1:$(free_port)"], "worker": ["127.0.0.1:$(free_port)"]}
JSON

"$node_bin" --insecure --cluster_file="$dir/cluster.json" --job_name=counter --task_index=0 \
  > "$dir/node.log" 2>&1 &
node_pid=$!
for _ in $(seq 300); do  # up to 30 s
  grep -q "serving at" "$dir/node.log" && break
  kill -0 "$node_pid" 2>/dev/null || { cat "$dir/node.log"; exit 1; }
  sleep 0.1
done
grep -q "serving at" "$dir/node.log" || { echo "the node did not start"; cat "$dir/node.log"; exit 1; }

output=$(timeout 60 "$client_bin" "$dir/cluster.json" "the quick brown fox" "jumps over")
echo "$output"
grep -q "^4 words (total 4), counted by /job:counter/replica:0/task:0$" <<<"$output"
grep -q "^2 words (total 6), counted by /job:counter/replica:0/task:0$" <<<"$output"

kill -TERM "$node_pid"
status=0
timeout 30 tail --pid="$node_pid" -f /dev/null || { echo "the node did not stop"; exit 1; }
wait "$node_pid" || status=$?
node_pid=
[ "$status" -eq 0 ] || { echo "the node exited $status"; cat "$dir/node.log"; exit 1; }
echo "custom_role: ok"
