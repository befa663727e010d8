# Helpers shared by scripts/start.sh and scripts/test.sh.

# Install npm dependencies when node_modules is missing or older than the lock file. A node_modules
# that is a symbolic link is an install shared with other checkouts: `npm ci` would delete it under
# them, so it is left alone (install into it where it lives).
ensure_node_modules() {
  if [ -L node_modules ]; then
    if [ package-lock.json -nt node_modules/.package-lock.json ]; then
      echo "== node_modules links to $(readlink node_modules), older than package-lock.json: not reinstalled here"
    fi
    return 0
  fi
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "== installing npm dependencies"
    # Errors only: the codec benchmark's peer client (a development dependency) declares a newer
    # Node than 20, and npm would print an engine warning per package on every install on Node 20.
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

# Debian packages the tests use: kcat, kafka-python, PostgreSQL, openssl (test certificates) and
# Chromium (console browser tests). Installed only when missing.
ensure_system_packages() {
  local missing=()
  command -v kcat >/dev/null 2>&1 || missing+=(kcat)
  python3 -c 'import kafka' >/dev/null 2>&1 || /usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || missing+=(python3-kafka)
  pg_bin_dir >/dev/null 2>&1 || missing+=(postgresql)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "== installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# The directory holding initdb/pg_ctl/postgres of the newest installed PostgreSQL.
pg_bin_dir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}
