#!/bin/sh
# Start one KRaft node: format its storage when the data directory holds none (first start,
# or a wiped disk), then exec the server so that it is the container's main process and a
# `docker kill` is a real SIGKILL of the JVM.
#
# Environment (set by harness/cluster.py):
#   KAFKA_CLUSTER_ID       cluster id, the same on every node (required)
#   KAFKA_RELEASE_VERSION  metadata version to format with (optional, e.g. 3.4-IV0)
#   KAFKA_HEAP_OPTS        JVM heap options
# At image build, train-cds.sh runs it with KAFKA_CHAOS_TRAIN (where to write the JVMs'
# class-data archives) and its own config and log directory; nodes start from those archives.
set -eu

conf=${KAFKA_CHAOS_CONF:-/etc/kafka/server.properties}
libs='/opt/kafka/libs/*'
logs=${KAFKA_CHAOS_LOGS:-/var/log/kafka}
cds=/opt/kafka-chaos

# The JVM option that starts from archive $1, or (training) the one that writes it at exit.
archive() {
  if [ -n "${KAFKA_CHAOS_TRAIN:-}" ]; then
    echo "-XX:ArchiveClassesAtExit=$KAFKA_CHAOS_TRAIN/$1"
  elif [ -f "$cds/$1" ]; then
    echo "-XX:SharedArchiveFile=$cds/$1"
  fi
}
: "${KAFKA_CLUSTER_ID:?KAFKA_CLUSTER_ID is not set}"
: "${KAFKA_HEAP_OPTS:=-Xms512m -Xmx512m}"

if ls /opt/kafka/libs/log4j-core-2*.jar >/dev/null 2>&1; then
  log_opts="-Dlog4j2.configurationFile=/opt/kafka-chaos/log4j2.properties"
else
  log_opts="-Dlog4j.configuration=file:/opt/kafka-chaos/log4j.properties"
fi

data_dir=$(sed -n 's/^log\.dirs=\([^,]*\).*/\1/p' "$conf")
meta_dir=$(sed -n 's/^metadata\.log\.dir=//p' "$conf")
meta_dir=${meta_dir:-$data_dir}

if [ ! -f "$meta_dir/meta.properties" ]; then
  echo "kafka-chaos: formatting $meta_dir for cluster $KAFKA_CLUSTER_ID ${KAFKA_RELEASE_VERSION:+at metadata version $KAFKA_RELEASE_VERSION}"
  # shellcheck disable=SC2086
  java $(archive format.jsa) -Xmx256m $log_opts -Dkafka.logs.dir="$logs" -cp "$libs" kafka.tools.StorageTool format \
    -t "$KAFKA_CLUSTER_ID" -c "$conf" --ignore-formatted \
    ${KAFKA_RELEASE_VERSION:+--release-version "$KAFKA_RELEASE_VERSION"}
fi

# shellcheck disable=SC2086
exec java $(archive kafka.jsa) $KAFKA_HEAP_OPTS \
  -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
  -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
  $log_opts -Dkafka.logs.dir="$logs" ${KAFKA_OPTS:-} \
  -cp "$libs" kafka.Kafka "$conf"
