# Java for the interop tests, which run Kafka's own Java clients, tools and Streams from
# ../shared/kafka-java (Java 17 or newer). Sourced by scripts/test.sh next to ensure.sh.

# The major version of the `java` on PATH (or $JAVA_HOME/bin/java), or nothing when there is none.
java_major_version() {
  local java=java
  [ -n "${JAVA_HOME:-}" ] && java="$JAVA_HOME/bin/java"
  command -v "$java" >/dev/null 2>&1 || return 0
  "$java" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1
}

# Installs Debian's openjdk-17-jre-headless when no Java 17 or newer is found. Its runtime image
# holds the jdk.compiler module, which the tests use to compile their Java programs (Java's source
# launcher, `kafka-run-class Foo.java`). Nothing is installed when ../shared/kafka-java is absent:
# the Java tests then report that they were not run.
ensure_java() {
  [ -d ../shared/kafka-java ] || [ -n "${KAFKA_JAVA_DIR:-}" ] || return 0
  local major
  major=$(java_major_version)
  if [ -n "$major" ] && [ "$major" -ge 17 ]; then
    return 0
  fi
  echo "== installing Debian package: openjdk-17-jre-headless"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
}
