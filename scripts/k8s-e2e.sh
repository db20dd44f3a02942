#!/usr/bin/env bash
# The Kubernetes manifests run for real, as far as podman 4.3 allows (docs/deploy.md):
# builds the images (scripts/image.sh, and with --python), generates the manifests of a 1 ps +
# 2 worker job with TLS (troupe k8s --make_credentials) and checks them, turns each StatefulSet
# into one Pod per task (deploy/k8s/tools/podman_pods.mjs: a shared host directory stands for
# the claim), and plays them on a podman network where each pod has its StatefulSet DNS name.
# Two jobs, one after the other:
#  1. `troupe train` on Fashion-MNIST; the ps is killed (SIGKILL to its process) once the chief
#     is a fifth of the way; the ps must be restarted and the job recover and finish.
#  2. A TensorFlow 1.x program, examples/python/tfrecord_trainer.py in the Python image, with
#     the TFRecord files `troupe data` writes on the shared volume: tf.data, each worker its
#     shard, to the accuracy of the in-memory job.
# Tears everything down; prints the chiefs' recovery and accuracy lines. About two minutes on
# 2 cores.
#   scripts/k8s-e2e.sh                  # fails where podman cannot run
#   scripts/k8s-e2e.sh --if-supported   # says it is skipped where podman cannot run at all
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh podman buildah runc catatonit \
  golang-github-containernetworking-plugin-dnsname curl >&2
export CONTAINERS_CONF=$PWD/deploy/image/containers.conf
if [ "${1:-}" = --if-supported ] && ! why=$(podman info 2>&1 >/dev/null); then
  echo "k8s-e2e: skipped: podman cannot run on this machine: $why"
  exit 0
fi
command -v npm >/dev/null || scripts/install-deps.sh nodejs npm >&2
[ -d deploy/k8s/tools/node_modules ] ||
  npm ci --prefix deploy/k8s/tools --no-audit --no-fund --loglevel=error >&2
image=localhost/$(scripts/image.sh)
python_image=localhost/$(scripts/image.sh --python)
troupe=${BUILD_DIR:-build}/apps/troupe

name=e2e$$
network=troupe-$name
work=$(mktemp -d)
pods=()
teardown() {
  for pod in "${pods[@]}"; do podman pod rm --force "$pod" >/dev/null 2>&1 || true; done
  podman network rm --force "$network" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap teardown EXIT
fail() {
  echo "k8s-e2e: FAILED: $*" >&2
  for pod in "${pods[@]}"; do
    echo "== $pod" >&2
    logs_of "$pod" | tail -n 20 >&2 || true
  done
  exit 1
}
# logs_of POD: what the pod's task has logged (captured whole: a grep that stops at its first
# match would end podman logs with SIGPIPE, which pipefail counts as a failure).
logs_of() { podman logs "$1-task" 2>&1; }
# wait_for_log POD REGEX SECONDS: until the pod's task logs a line matching REGEX.
wait_for_log() {
  local deadline=$((SECONDS + $3)) logs
  until logs=$(logs_of "$1") && grep -Eq "$2" <<<"$logs"; do
    [ $SECONDS -lt $deadline ] || fail "$1 did not log /$2/ within $3 s"
    sleep 1
  done
}

# play JOB IMAGE PROGRAM...: the manifests of JOB (1 ps + 2 workers running PROGRAM in
# IMAGE), checked, played as pods on the network; then every task's health endpoint must answer
# as the manifests' probes ask it.
play() {
  local job=$1 image=$2 file alias pod address answer started=()
  shift 2
  "$troupe" k8s --name="$job" --image="$image" --make_credentials --ps=1 --workers=2 -- "$@" \
    >"$work/$job.yaml"
  node deploy/k8s/tools/validate.mjs "$work/$job.yaml"
  node deploy/k8s/tools/podman_pods.mjs "$work/$job.yaml" "$work" >"$work/$job-pods.txt"
  while read -r file alias; do
    pod=$(basename "$file" .yaml)
    pods+=("$pod")
    started+=("$pod")
    podman kube play --network "$network:alias=$alias" "$file" >/dev/null
    echo "k8s-e2e: pod $pod as $alias"
  done <"$work/$job-pods.txt"
  for pod in "${started[@]}"; do
    wait_for_log "$pod" 'health checks at' 60
    address=$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
      "$pod-task")
    answer=$(curl --silent --max-time 3 "http://$address:8080/healthz") ||
      fail "$pod's /healthz did not answer"
    [ "$answer" = ok ] || fail "$pod's /healthz answered '$answer'"
  done
  echo "k8s-e2e: every task of $job answers its liveness and readiness probe (GET /healthz)"
}
# accuracy_of POD: the test accuracy its log reports.
accuracy_of() { grep -oE 'test accuracy [0-9.]+' <<<"$(logs_of "$1")" | sed -n 1p | awk '{print $3}'; }
# remove_pods: the pods played so far, gone (the next job starts on a quiet machine).
remove_pods() {
  for pod in "${pods[@]}"; do podman pod rm --force "$pod" >/dev/null 2>&1 || true; done
  pods=()
}

podman network create "$network" >/dev/null
play "$name" "$image" troupe train --checkpoint_dir=/train_logs --epochs=4 \
  --save_checkpoint_steps=50
chief=$name-worker-0 ps=$name-ps-0
wait_for_log "$chief" '\((2|3|4|5|6)[0-9]%\)' 240
echo "k8s-e2e: the chief is past a fifth of the job; killing the ps"
kill -KILL "$(podman inspect --format '{{.State.Pid}}' "$ps-task")"
deadline=$((SECONDS + 60))
until [ "$(podman inspect --format '{{.RestartCount}}' "$ps-task")" -ge 1 ] &&
  [ "$(podman inspect --format '{{.State.Running}}' "$ps-task")" = true ]; do
  [ $SECONDS -lt $deadline ] || fail "the ps was not restarted within 60 s"
  sleep 1
done
echo "k8s-e2e: the ps was restarted ($(podman inspect --format '{{.RestartCount}}' "$ps-task") restart)"
wait_for_log "$chief" 'training session recovered' 120
wait_for_log "$chief" 'test accuracy' 300
chief_logs=$(logs_of "$chief")
grep -E 'recovering|recovered' <<<"$chief_logs" | sed -n 1,2p
grep -m1 'test accuracy' <<<"$chief_logs"
accuracy=$(accuracy_of "$chief")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.8) }' || fail "test accuracy $accuracy is below 0.8"
compgen -G "$work/volumes/$name-train-logs/model.ckpt-*" >/dev/null || fail "no checkpoint on the shared volume"
echo "k8s-e2e: ok: test accuracy $accuracy after the ps was killed and restarted"
remove_pods

# The Python job: its records on the shared volume, as a data set on the seeds' NFS would be.
python_job=${name}py
"$troupe" data fashion-mnist --to="$work/volumes/$python_job-train-logs/records" --shards=2 \
  >/dev/null
play "$python_job" "$python_image" python3 /app/tfrecord_trainer.py \
  --records_dir=/train_logs/records --checkpoint_dir=/train_logs --epochs=2
wait_for_log "$python_job-worker-0" 'test accuracy' 300
grep -m1 'test accuracy' <<<"$(logs_of "$python_job-worker-0")"
accuracy=$(accuracy_of "$python_job-worker-0")
# 2 epochs of this program: 0.837-0.851 on 2 cores (test/python/test_data.py asks >= 0.78).
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.78) }' ||
  fail "the Python job's test accuracy $accuracy is below 0.78"
compgen -G "$work/volumes/$python_job-train-logs/model.ckpt-*" >/dev/null ||
  fail "the Python job left no checkpoint on the shared volume"
echo "k8s-e2e: ok: the TF1 program in the Python image reached test accuracy $accuracy"
