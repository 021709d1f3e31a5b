# Sourced (from the repository's root) by the PostgreSQL benchmarks, after `out` and `n` are set:
# the reference load ($out/formats-legacy.bin, made once), the server's rate limits raised for it
# ($out/nodes-limits.yaml), a throwaway server's binaries ($pgbin), a work directory for its data
# ($work) and `as_pg` (runs a command as the postgres user when run as root, as initdb requires).
mkdir -p "$out"
[ -f "$out/formats-legacy.bin" ] || python3 ../shared/bench/make_payloads.py "$n" "$out/formats-legacy.bin" --seed 11
cat >"$out/nodes-limits.yaml" <<YAML
limits: {ingest_rate_per_key: 100000, ingest_burst_per_key: 100000, ingest_rate_per_ip: 100000, ingest_burst_per_ip: 100000}
YAML
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
work="$(mktemp -d /tmp/lifeline-bench-XXXXXX)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; fi
