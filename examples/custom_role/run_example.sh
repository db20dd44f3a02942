#!/usr/bin/env bash
# Runs the example as docs/roles.md shows it, twice: with plain TCP (--insecure), then with TLS
# credentials made by docs/security.md's openssl commands and passed in TROUPE_TLS_CERT/KEY/CA,
# as across machines. Each time: a counter node on a free loopback port, then the client, which
# must get each text's word count back; then the node is stopped with SIGTERM and must exit 0.
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

# One round: the node with `$@` as its extra flags, then the client.
run_round() {
  cat > "$dir/cluster.json" <<JSON
{"counter": ["127.0.0.1:$(free_port)"], "worker": ["127.0.0.1:$(free_port)"]}
JSON
  "$node_bin" "$@" --cluster_file="$dir/cluster.json" --job_name=counter --task_index=0 \
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
}

echo "== --insecure"
run_round --insecure

echo "== TLS"
(
  cd "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
    -subj '/CN=my-cluster CA' -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj '/CN=task' -keyout task.key -out task.csr 2>/dev/null
  openssl x509 -req -in task.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 365 \
    -out task.pem 2>/dev/null
  chmod 600 task.key
)
export TROUPE_TLS_CERT=$dir/task.pem TROUPE_TLS_KEY=$dir/task.key TROUPE_TLS_CA=$dir/ca.pem
run_round
grep -q "insecure" "$dir/node.log" && { echo "the TLS node warned of --insecure"; exit 1; }
echo "custom_role: ok"
