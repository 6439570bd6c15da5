#!/bin/sh
# Start one KRaft node: format its storage when the data directory holds none (first start,
# or a wiped disk), then exec the server so that it is the container's main process and a
# `docker kill` is a real SIGKILL of the JVM.
#
# Environment (set by harness/cluster.py):
#   KAFKA_CLUSTER_ID       cluster id, the same on every node (required)
#   KAFKA_RELEASE_VERSION  metadata version to format with (optional, e.g. 3.4-IV0)
#   KAFKA_FORMAT_OPTS      more options for the format tool (optional: a dynamic quorum's
#                          controller gets --no-initial-controllers, formatted again as a
#                          replaced disk; its first format is the harness's, harness/node.py)
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

# A new directory id as the format tool makes one (Kafka's Uuid: 16 random bytes, URL-safe
# base64 without padding, never starting with '-').
new_uuid() {
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    case $id in -*) ;; *) echo "$id"; return ;; esac
  done
}

# Whether this node's storage can be laid out from the image's formatted template ($formatted,
# written by train-cds.sh with this version's format tool at its default metadata version)
# instead of starting the format tool's JVM: about 0.8 s of CPU per node start, a node being
# started by the hundred in a test suite and again after every wipe. Only in the case the template
# is a copy of: no pinned metadata version, one data directory that also holds the metadata log,
# and nothing in the config the format tool reads for its features (the inter-broker protocol,
# unstable versions). Anything else goes to the tool.
formatted=$cds/formatted
from_template() {
  [ -z "${KAFKA_RELEASE_VERSION:-}" ] && [ -f "$formatted/bootstrap.checkpoint" ] && [ -f "$formatted/meta.properties" ] &&
    [ "$meta_dir" = "$data_dir" ] && ! grep -q '^log\.dirs=.*,' "$conf" &&
    ! grep -Eq '^(inter\.broker\.protocol\.version|unstable\.)' "$conf"
}

if [ ! -f "$meta_dir/meta.properties" ]; then
  if from_template; then
    # What the tool writes: the bootstrap features (one file for every node of one version) and
    # meta.properties, with a directory id where this version's tool writes one (3.7 and later).
    echo "kafka-chaos: formatting $meta_dir for cluster $KAFKA_CLUSTER_ID from the image's formatted storage"
    node_id=$(sed -n 's/^node\.id=//p' "$conf")
    mkdir -p "$meta_dir"
    cp "$formatted/bootstrap.checkpoint" "$meta_dir/bootstrap.checkpoint"
    {
      echo "node.id=$node_id"
      if grep -q '^directory\.id=' "$formatted/meta.properties"; then echo "directory.id=$(new_uuid)"; fi
      echo "version=1"
      echo "cluster.id=$KAFKA_CLUSTER_ID"
    } > "$meta_dir/meta.properties.tmp"
    mv "$meta_dir/meta.properties.tmp" "$meta_dir/meta.properties"
  else
    echo "kafka-chaos: formatting $meta_dir for cluster $KAFKA_CLUSTER_ID ${KAFKA_RELEASE_VERSION:+at metadata version $KAFKA_RELEASE_VERSION}"
    # shellcheck disable=SC2086
    java $(archive format.jsa) -Xmx256m $log_opts -Dkafka.logs.dir="$logs" -cp "$libs" kafka.tools.StorageTool format \
      -t "$KAFKA_CLUSTER_ID" -c "$conf" --ignore-formatted \
      ${KAFKA_RELEASE_VERSION:+--release-version "$KAFKA_RELEASE_VERSION"} ${KAFKA_FORMAT_OPTS:-}
  fi
fi

# shellcheck disable=SC2086
exec java $(archive kafka.jsa) $KAFKA_HEAP_OPTS \
  -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
  -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
  $log_opts -Dkafka.logs.dir="$logs" ${KAFKA_OPTS:-} \
  -cp "$libs" kafka.Kafka "$conf"
