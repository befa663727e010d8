# A throwaway PostgreSQL cluster on loopback for the tests. Exports TOPOGRAPH_TEST_PG_URL,
# TOPOGRAPH_TEST_PG_CTL (a command that takes start|stop, so tests can stop and restart the database).
pg_cluster_start() {
  local bin; bin=$(pg_bin_dir)
  PG_TMP=$(mktemp -d /tmp/topograph-pg.XXXXXX)
  local port=${TOPOGRAPH_TEST_PG_PORT:-$((20000 + RANDOM % 20000))}
  local as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$PG_TMP" 2>/dev/null || { useradd -r postgres && chown postgres:postgres "$PG_TMP"; }
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$PG_TMP/data" -U topograph --auth=trust -E UTF8 >/dev/null
  cat > "$PG_TMP/ctl" <<CTL
#!/usr/bin/env bash
case "\$1" in
  start) ${as[*]} "$bin/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/log" -w -o "-k $PG_TMP -h 127.0.0.1 -p $port -F" start >/dev/null ;;
  stop)  ${as[*]} "$bin/pg_ctl" -D "$PG_TMP/data" -m fast -w stop >/dev/null ;;
esac
CTL
  chmod +x "$PG_TMP/ctl"
  "$PG_TMP/ctl" start
  export TOPOGRAPH_TEST_PG_URL="postgres://topograph@127.0.0.1:$port/postgres"
  export TOPOGRAPH_TEST_PG_CTL="$PG_TMP/ctl"
  echo "== PostgreSQL for the tests on 127.0.0.1:$port"
}

pg_cluster_stop() {
  [ -n "${PG_TMP:-}" ] || return 0
  "$PG_TMP/ctl" stop 2>/dev/null || true
  rm -rf "$PG_TMP"
}
