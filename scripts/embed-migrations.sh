#!/usr/bin/env bash
# Regenerates Sources/LifelineSQLite/Migrations/EmbeddedMigrations.swift from migrations/NNNN_name.sql
# (SQLite) and Sources/LifelinePostgres/EmbeddedPostgresMigrations.swift from
# migrations/postgres/NNNN_name.sql, so the binary carries its migrations without the source tree.
# Run after adding a migration; GeneratedFilesAreFresh fails when the embedded set and the folder differ.
#
# usage: scripts/embed-migrations.sh [REPO_ROOT]
set -euo pipefail

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
indent="                "
shopt -s nullglob

# embed FOLDER OUT ENUM IMPORT
embed() {
local folder="$1" out="$root/$2" enum="$3" import="$4"
files=("$root/$folder"/[0-9][0-9][0-9][0-9]_*.sql)
if [ ${#files[@]} -eq 0 ]; then
    echo "embed-migrations: no $folder/NNNN_name.sql files under $root" >&2
    exit 1
fi

mkdir -p "$(dirname "$out")"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
{
    echo "// GENERATED FILE: do not edit. Made from $folder/*.sql by: bash scripts/embed-migrations.sh"
    echo "// Add a new .sql file (never change a shipped one) and run it again; GeneratedFilesAreFresh fails when"
    echo "// this file differs from what the script makes."
    echo ""
    if [ -n "$import" ]; then echo "import $import"; echo ""; fi
    echo "/// The SQL migrations shipped with this binary, in version order (generated, do not edit)."
    echo "package enum $enum {"
    echo "    /// Every migration of \`$folder/\`, byte for byte."
    echo "    package static let all: [Migration] = ["
    for file in "${files[@]}"; do
        base="$(basename "$file" .sql)"
        version="$((10#${base%%_*}))"
        name="${base#*_}"
        if ! [[ "$name" =~ ^[a-z0-9_]+$ ]]; then
            echo "embed-migrations: $base.sql: name must match [a-z0-9_]+" >&2
            exit 1
        fi
        if grep -q '"""#\|\\#' "$file"; then
            echo "embed-migrations: $base.sql contains a raw-string delimiter" >&2
            exit 1
        fi
        if grep -q $'\r' "$file"; then
            echo "embed-migrations: $base.sql has CR line endings" >&2
            exit 1
        fi
        echo "        Migration("
        echo "            version: $version,"
        echo "            name: \"$name\","
        echo "            sql: #\"\"\""
        # Every line of the file, indented (empty lines stay empty); a file ending in a newline
        # ends with an empty line so the literal ends with that newline too.
        awk -v indent="$indent" '{ if (length($0) == 0) print ""; else print indent $0 }' "$file"
        if [ -n "$(tail -c 1 "$file")" ]; then
            echo "embed-migrations: $base.sql must end with a newline" >&2
            exit 1
        fi
        echo ""
        echo "${indent}\"\"\"#"
        # swift-format wants a trailing comma after every element, except in a one-element list.
        if [ ${#files[@]} -eq 1 ]; then echo "        )"; else echo "        ),"; fi
    done
    echo "    ]"
    echo "}"
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "embed-migrations: wrote ${#files[@]} migration(s) to ${out#"$root"/}"
}

embed migrations Sources/LifelineSQLite/Migrations/EmbeddedMigrations.swift EmbeddedMigrations LifelineStorage
embed migrations/postgres Sources/LifelinePostgres/EmbeddedPostgresMigrations.swift EmbeddedPostgresMigrations LifelineStorage
