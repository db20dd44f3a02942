// Turns troupe k8s's manifests into what podman 4.3's `kube play` runs, for
// scripts/k8s-e2e.sh: one Pod per task of each StatefulSet, as its controller would make it.
//   node podman_pods.mjs MANIFESTS.yaml OUT_DIR
// For pod i of StatefulSet S (service N), it writes OUT_DIR/S-i.yaml and prints
// "OUT_DIR/S-i.yaml S-i.N" (the pod's file and its DNS name, for --network NET:alias=).
// Podman lacks the pod-index label, $(VAR) expansion, claims and Secret volumes, so: POD_INDEX
// and TF_CONFIG get the ordinal written in; a claim becomes a host directory shared by every
// pod (OUT_DIR/volumes/CLAIM, the seeds' NFS); a Secret becomes a host directory of its files
// (OUT_DIR/secrets/SECRET, mode 0400 as the manifests mount it); container ports are not
// published on the host, and the probes are left to the caller. Deployments (TensorBoard,
// whose image is the user's) are left out and named on stderr.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import yaml from "js-yaml";

const [manifests, out] = process.argv.slice(2);
if (!manifests || !out) {
  console.error("usage: node podman_pods.mjs MANIFESTS.yaml OUT_DIR");
  process.exit(2);
}
const objects = yaml.loadAll(readFileSync(manifests, "utf8")).filter((o) => o);

const secrets = new Map(objects.filter((o) => o.kind === "Secret").map((o) => [o.metadata.name, o]));

function hostVolume(volume) {
  if (volume.persistentVolumeClaim) {
    const path = `${out}/volumes/${volume.persistentVolumeClaim.claimName}`;
    mkdirSync(path, { recursive: true });
    return { name: volume.name, hostPath: { path, type: "Directory" } };
  }
  if (volume.secret) {
    const secret = secrets.get(volume.secret.secretName);
    if (!secret) throw new Error(`Secret ${volume.secret.secretName} is not in ${manifests}`);
    const path = `${out}/secrets/${secret.metadata.name}`;
    mkdirSync(path, { recursive: true });
    for (const [file, data] of Object.entries(secret.data ?? {})) {
      writeFileSync(`${path}/${file}`, Buffer.from(data, "base64"));
      chmodSync(`${path}/${file}`, volume.secret.defaultMode ?? 0o644);
    }
    return { name: volume.name, hostPath: { path, type: "Directory" } };
  }
  return volume;
}

for (const object of objects) {
  if (object.kind === "Deployment") {
    console.error(`podman_pods: left out ${object.kind} ${object.metadata.name}`);
    continue;
  }
  if (object.kind !== "StatefulSet") continue;
  const template = object.spec.template;
  for (let i = 0; i < object.spec.replicas; ++i) {
    const name = `${object.metadata.name}-${i}`;
    const spec = structuredClone(template.spec);
    for (const container of spec.containers) {
      // kube play publishes a containerPort on the host; the pods reach each other on their
      // network without it. It runs probes as commands inside the container, and troupe's
      // image has no shell or HTTP client: scripts/k8s-e2e.sh asks the endpoints itself.
      delete container.ports;
      delete container.livenessProbe;
      delete container.readinessProbe;
      container.env = (container.env ?? []).map((env) =>
        env.name === "POD_INDEX" ? { name: env.name, value: String(i) }
          : env.value !== undefined ? { name: env.name, value: env.value.replaceAll("$(POD_INDEX)", String(i)) }
            : env);
    }
    spec.volumes = (spec.volumes ?? []).map(hostVolume);
    spec.hostname = name;
    const pod = {
      apiVersion: "v1", kind: "Pod",
      metadata: { name, labels: { ...template.metadata.labels, "apps.kubernetes.io/pod-index": String(i) } },
      spec,
    };
    const file = `${out}/${name}.yaml`;
    writeFileSync(file, yaml.dump(pod));
    console.log(`${file} ${name}.${object.spec.serviceName}`);
  }
}
