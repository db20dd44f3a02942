#!/usr/bin/env bash
# The Kubernetes manifests run for real, as far as podman 4.3 allows (docs/deploy.md):
# builds the image (scripts/image.sh), generates the manifests of a 1 ps + 2 worker job with
# TLS (troupe k8s --make_credentials) and checks them, turns each StatefulSet into one Pod per
# task (deploy/k8s/tools/podman_pods.mjs: a shared host directory stands for the claim), plays
# them on a podman network where each pod has its StatefulSet DNS name, trains Fashion-MNIST
# across the pods, kills the ps (SIGKILL to its process) once the chief is a fifth of the way,
# checks that the ps is restarted and the job recovers and finishes, and tears everything down.
# Prints the chief's recovery and accuracy lines. About a minute on 2 cores.
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

"$troupe" k8s --name="$name" --image="$image" --make_credentials --ps=1 --workers=2 -- \
  troupe train --checkpoint_dir=/train_logs --epochs=4 --save_checkpoint_steps=50 \
  >"$work/manifests.yaml"
node deploy/k8s/tools/validate.mjs "$work/manifests.yaml"
podman network create "$network" >/dev/null
node deploy/k8s/tools/podman_pods.mjs "$work/manifests.yaml" "$work" >"$work/pods.txt"
while read -r file alias; do
  pod=$(basename "$file" .yaml)
  pods+=("$pod")
  podman kube play --network "$network:alias=$alias" "$file" >/dev/null
  echo "k8s-e2e: pod $pod as $alias"
done <"$work/pods.txt"

chief=$name-worker-0 ps=$name-ps-0
# What the manifests' probes ask, asked from here: every task's health endpoint answers.
for pod in "${pods[@]}"; do
  wait_for_log "$pod" 'health checks at' 60
  address=$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
    "$pod-task")
  answer=$(curl --silent --max-time 3 "http://$address:8080/healthz") ||
    fail "$pod's /healthz did not answer"
  [ "$answer" = ok ] || fail "$pod's /healthz answered '$answer'"
done
echo "k8s-e2e: every task answers its liveness and readiness probe (GET /healthz)"
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
accuracy=$(grep -oE 'test accuracy [0-9.]+' <<<"$chief_logs" | sed -n 1p | awk '{print $3}')
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.8) }' || fail "test accuracy $accuracy is below 0.8"
compgen -G "$work/volumes/$name-train-logs/model.ckpt-*" >/dev/null || fail "no checkpoint on the shared volume"
echo "k8s-e2e: ok: test accuracy $accuracy after the ps was killed and restarted"
