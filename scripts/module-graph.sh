#!/usr/bin/env bash
# Prints the module graph of Package.swift (local targets and what each imports), as the README's
# architecture section shows it. `--check` compares it with the README's block between the
# `module-graph` markers and fails when they differ (.ci/run runs it).
#
# usage: scripts/module-graph.sh [--check]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

graph="$(swift package dump-package 2>/dev/null | python3 -c '
import json, sys
package = json.load(sys.stdin)
targets = {t["name"]: t for t in package["targets"]}
def local(dep):
    for kind in ("byName", "target"):
        if kind in dep:
            return dep[kind][0]
    return None
def external(dep):
    return dep["product"][0] if "product" in dep else None
order, seen = [], set()
def visit(name):
    if name in seen or name not in targets:
        return
    seen.add(name)
    for dep in targets[name]["dependencies"]:
        if local(dep):
            visit(local(dep))
    order.append(name)
for name in sorted(targets):
    visit(name)
width = max(len(n) for n in order)
for name in order:
    t = targets[name]
    kind = {"regular": "", "executable": " (executable)", "test": " (tests)", "system": " (C library)"}.get(t["type"], "")
    locals_ = [local(d) for d in t["dependencies"] if local(d)]
    externals = sorted({external(d) for d in t["dependencies"] if external(d)})
    line = name.ljust(width) + " ──▶ " + (", ".join(locals_) if locals_ else "—")
    if externals:
        line += "  [" + ", ".join(externals) + "]"
    print(line + kind)
')"

if [ "${1:-}" = "--check" ]; then
    readme="$(awk '/<!-- module-graph:begin -->/{flag=1; next} /<!-- module-graph:end -->/{flag=0} flag' README.md \
        | sed '/^```/d')"
    if [ "$readme" != "$graph" ]; then
        echo "module-graph: README.md's module graph differs from Package.swift; expected:" >&2
        echo "$graph" >&2
        exit 1
    fi
    echo "module-graph: README.md matches Package.swift"
else
    echo "$graph"
fi
