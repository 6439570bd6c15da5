#!/bin/sh
# Run at image build: start a throwaway single-node KRaft server once, stop it, and keep the
# class-data archives (JDK AppCDS) that its two JVMs write as they exit: one for the storage
# format tool, one for the server. entrypoint.sh starts both JVMs from them, which cuts the
# CPU a node spends starting by a third (about 7 s to 4.6 s here); a test suite or a nemesis
# starts nodes by the hundred on a 2-core machine. An archive belongs to this image's JVM and jars, so it is
# made here, in the image. Nothing in it is required: when training fails the image is built
# without archives and nodes start as they would have.
set -u
out=/opt/kafka-chaos
work=$(mktemp -d)
mkdir -p "$work/data" "$work/logs"
cat > "$work/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:19093
listeners=PLAINTEXT://localhost:19092,CONTROLLER://localhost:19093
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$work/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
PROPS
KAFKA_CHAOS_CONF="$work/server.properties" KAFKA_CHAOS_LOGS="$work/logs" KAFKA_CLUSTER_ID=kafkachaostrainingAAAA \
  KAFKA_CHAOS_TRAIN="$out" /opt/kafka-chaos/entrypoint.sh > "$work/out.log" 2>&1 &
pid=$!
started=no
for _ in $(seq 1 240); do
  if grep -q "Kafka Server started\|started (kafka.server.KafkaRaftServer)" "$work/out.log"; then
    started=yes
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
# The format tool's output (this version's default metadata version, no pinned features): a new
# node's storage is laid out from it by entrypoint.sh, without starting the tool's JVM again.
if [ -s "$work/data/bootstrap.checkpoint" ] && [ -s "$work/data/meta.properties" ]; then
  mkdir -p "$out/formatted"
  cp "$work/data/bootstrap.checkpoint" "$work/data/meta.properties" "$out/formatted/"
  chmod 0755 "$out/formatted" && chmod 0644 "$out"/formatted/*
  echo "kafka-chaos: formatted storage kept as a template"
fi
if [ "$started" = yes ] && [ -s "$out/format.jsa" ] && [ -s "$out/kafka.jsa" ]; then
  chmod 0644 "$out"/*.jsa
  echo "kafka-chaos: class-data archives written ($(du -ch "$out"/*.jsa | tail -1 | cut -f1))"
else
  rm -f "$out"/*.jsa
  echo "kafka-chaos: no class-data archives (the training server did not start); nodes start without them"
  tail -20 "$work/out.log"
fi
rm -rf "$work"
exit 0
