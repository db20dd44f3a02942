// Checks Kubernetes manifests as an API server would before accepting them, offline:
//   node validate.mjs FILE.yaml...    (YAML streams; "-" or nothing reads stdin)
// Each document is validated against the official schema of its kind (kubernetes-models:
// required fields, types, formats), and every field is looked up in the kind's generated model
// (@kubernetes/client-node), so that a misspelt or misplaced field is an error instead of being
// dropped. Prints one line per document, and each problem with its path; exits 1 if any.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import yaml from "js-yaml";
import * as client from "@kubernetes/client-node";

const require = createRequire(import.meta.url);

// The kubernetes-models class of an apiVersion and kind ("apps/v1", "StatefulSet").
function schemaModel(apiVersion, kind) {
  try {
    return require(`kubernetes-models/${apiVersion}/${kind}`)[kind];
  } catch {
    return undefined;
  }
}

// Fields that no model lists and no type checks: the problems with `value` as a `type` of
// @kubernetes/client-node ("V1PodSpec", "Array<V1Container>", "{ [key: string]: string; }").
function unknownFields(value, type, path, problems) {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) return problems.push(`${path}: expected a list`);
    value.forEach((item, i) => unknownFields(item, array[1], `${path}[${i}]`, problems));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== "object" || Array.isArray(value)) {
      return problems.push(`${path}: expected a mapping`);
    }
    for (const [key, item] of Object.entries(value)) {
      unknownFields(item, map[1], `${path}.${key}`, problems);
    }
    return;
  }
  const model = client[type];
  if (typeof model?.getAttributeTypeMap !== "function") return;  // a scalar: the schema checks it
  if (typeof value !== "object" || Array.isArray(value)) {
    return problems.push(`${path}: expected a mapping (${type})`);
  }
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [key, item] of Object.entries(value)) {
    if (!fields.has(key)) {
      problems.push(`${path}.${key}: unknown field (${type} has ${[...fields.keys()].join(", ")})`);
    } else {
      unknownFields(item, fields.get(key), `${path}.${key}`, problems);
    }
  }
}

function check(document) {
  const { apiVersion, kind } = document ?? {};
  const name = `${kind ?? "?"} ${document?.metadata?.name ?? "?"}`;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    return [name, ["apiVersion and kind are required"]];
  }
  const Model = schemaModel(apiVersion, kind);
  if (Model === undefined) return [name, [`unknown kind ${apiVersion} ${kind}`]];
  const problems = [];
  try {
    new Model(document).validate();
  } catch (error) {
    problems.push(`schema: ${error.message}`);
  }
  const version = apiVersion.split("/").pop();
  unknownFields(document, version[0].toUpperCase() + version.slice(1) + kind, "", problems);
  return [name, problems];
}

let failed = false;
const files = process.argv.slice(2);
for (const file of files.length > 0 ? files : ["-"]) {
  const text = readFileSync(file === "-" ? 0 : file, "utf8");
  for (const document of yaml.loadAll(text)) {
    if (document === null) continue;
    const [name, problems] = check(document);
    console.log(`${problems.length === 0 ? "ok" : "INVALID"}: ${name}`);
    for (const problem of problems) console.log(`  ${problem}`);
    failed ||= problems.length > 0;
  }
}
process.exit(failed ? 1 : 0);
