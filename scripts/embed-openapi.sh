#!/usr/bin/env bash
# Regenerates Sources/LifelineServer/Generated/EmbeddedOpenAPI.swift from openapi.yaml, so the binary serves
# GET /openapi.yaml without the source tree. LifelineServerTests fails when the two differ.
#
# usage: scripts/embed-openapi.sh [REPO_ROOT]
set -euo pipefail

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
spec="$root/openapi.yaml"
out="$root/Sources/LifelineServer/Generated/EmbeddedOpenAPI.swift"
indent="        "

if grep -q '"""#\|\\#' "$spec"; then
    echo "embed-openapi: openapi.yaml contains a raw-string delimiter" >&2
    exit 1
fi
if [ -n "$(tail -c 1 "$spec")" ]; then
    echo "embed-openapi: openapi.yaml must end with a newline" >&2
    exit 1
fi
{
    echo "// GENERATED FILE: do not edit. Made from openapi.yaml by: bash scripts/embed-openapi.sh"
    echo "// Edit openapi.yaml and run it again; GeneratedFilesAreFresh fails when this file differs from what the"
    echo "// script makes."
    echo ""
    echo "/// The OpenAPI document served at \`GET /openapi.yaml\` (generated, do not edit)."
    echo "package enum EmbeddedOpenAPI {"
    echo "    /// \`openapi.yaml\`, byte for byte."
    echo "    package static let yaml = #\"\"\""
    awk -v indent="$indent" '{ if (length($0) == 0) print ""; else print indent $0 }' "$spec"
    echo ""
    echo "${indent}\"\"\"#"
    echo "}"
} >"$out"
echo "embed-openapi: wrote ${out#"$root"/}"
