#!/usr/bin/env bash
# Validates the deploy files with the validators available without a container engine:
# systemd-analyze verify for the unit, a YAML parse of every manifest, and `docker-compose config`
# when docker-compose is installed. usage: deploy/check.sh [path/to/lifeline]
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-.build/debug/lifeline}"
[ -x "$binary" ] || { echo "build lifeline first (or pass its path)" >&2; exit 1; }
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/local/bin/lifeline|$binary|g" deploy/systemd/lifeline.service > "$tmp/lifeline.service"
systemd-analyze verify "$tmp/lifeline.service"
echo "systemd unit: ok"

python3 - <<'PY'
import yaml
for path in ["deploy/kubernetes/lifeline-postgres.yaml", "deploy/compose/docker-compose.postgres.yml"]:
    docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    if "kubernetes" in path:
        deployment = next(d for d in docs if d["kind"] == "Deployment")
        assert deployment["spec"]["replicas"] > 1, "stateless nodes: more than one replica"
        c = deployment["spec"]["template"]["spec"]["containers"][0]
        assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    else:
        nodes = [name for name in docs[0]["services"] if name.startswith("lifeline-")]
        assert len(nodes) == 2 and "postgres" in docs[0]["services"] and "proxy" in docs[0]["services"], nodes
for path in ["deploy/kubernetes/lifeline.yaml", "deploy/compose/docker-compose.yml", "deploy/compose/prometheus.yml"]:
    docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    for d in docs:
        assert isinstance(d, dict), f"{path}: a document is not a mapping"
    if "kubernetes" in path:
        kinds = sorted(d["kind"] for d in docs)
        assert kinds == ["ConfigMap", "Service", "StatefulSet"], kinds
        sts = next(d for d in docs if d["kind"] == "StatefulSet")
        assert sts["spec"]["replicas"] == 1, "one writer"
        c = sts["spec"]["template"]["spec"]["containers"][0]
        assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    print(f"{path}: ok ({len(docs)} documents)")

import glob, json
for path in sorted(glob.glob("dashboards/*.json")):
    d = json.load(open(path))
    assert d.get("uid") and d.get("title"), f"{path}: uid and title"
    exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    assert exprs and all("lifeline_" in e for e in exprs), f"{path}: every panel queries lifeline_* metrics"
    print(f"{path}: ok ({len(d['panels'])} panels)")
for path in sorted(glob.glob("dashboards/provisioning/*/*.yaml")):
    doc = yaml.safe_load(open(path))
    assert doc.get("apiVersion") == 1 and (doc.get("datasources") or doc.get("providers")), path
    print(f"{path}: ok")
PY

if command -v docker-compose >/dev/null 2>&1; then
    docker-compose -f deploy/compose/docker-compose.yml config -q && echo "compose: ok (docker-compose config)"
fi
