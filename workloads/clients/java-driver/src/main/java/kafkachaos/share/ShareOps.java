package kafkachaos.share;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import kafkachaos.Driver;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The share-group calls of the driver (KIP-932): a {@link KafkaShareConsumer} per handle, its
 * records acknowledged one by one, and the admin calls a share run needs (the group's settings,
 * its start offsets). Compiled only against kafka-clients 4.1 or later (the pom's share profile);
 * the driver finds this class by name, so a driver built for an older client has none.
 */
public final class ShareOps implements Driver.Share {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Each consumer's records of its last poll, by "topic/partition@offset", for acknowledge(). */
  private final Map<Object, Map<String, ConsumerRecord<String, String>>> polled = new ConcurrentHashMap<>();

  @Override
  public AutoCloseable consumer(Properties props) {
    return new KafkaShareConsumer<String, String>(props);
  }

  /** The settings as given: the client's own view of them (ShareConsumerConfig) is not public. */
  @Override
  public JsonNode config(Properties props) {
    Map<String, Object> given = new HashMap<>();
    props.forEach((k, v) -> given.put(String.valueOf(k), v));
    return Driver.configNode(given);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void subscribe(Object consumer, List<String> topics) {
    ((KafkaShareConsumer<String, String>) consumer).subscribe(topics);
  }

  @Override
  @SuppressWarnings("unchecked")
  public JsonNode poll(Object consumer, long timeoutMs) {
    KafkaShareConsumer<String, String> c = (KafkaShareConsumer<String, String>) consumer;
    Map<String, ConsumerRecord<String, String>> mine = new HashMap<>();
    ArrayNode records = JSON.createArrayNode();
    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(timeoutMs))) {
      ArrayNode row = records.addArray().add(r.topic()).add(r.partition()).add(r.offset()).add(r.value());
      Optional<Short> count = r.deliveryCount();
      if (count.isPresent()) {
        row.add(count.get());
      } else {
        row.addNull();
      }
      mine.put(r.topic() + "/" + r.partition() + "@" + r.offset(), r);
    }
    polled.put(consumer, mine);
    ObjectNode reply = JSON.createObjectNode();
    reply.set("records", records);
    return reply;
  }

  /**
   * Acknowledges [[topic, partition, offset, type], ...] of the last poll, then commits them
   * synchronously: each partition's outcome, "ok" or the error it was refused with.
   */
  @Override
  @SuppressWarnings("unchecked")
  public JsonNode ack(Object consumer, JsonNode acks, long timeoutMs) {
    KafkaShareConsumer<String, String> c = (KafkaShareConsumer<String, String>) consumer;
    Map<String, ConsumerRecord<String, String>> mine = polled.getOrDefault(consumer, Map.of());
    for (JsonNode a : acks) {
      String id = a.get(0).asText() + "/" + a.get(1).asInt() + "@" + a.get(2).asLong();
      ConsumerRecord<String, String> r = mine.get(id);
      if (r == null) {
        throw new IllegalArgumentException("not delivered by the last poll: " + id);
      }
      c.acknowledge(r, AcknowledgeType.valueOf(a.get(3).asText().toUpperCase()));
    }
    Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofMillis(timeoutMs));
    ObjectNode outcomes = JSON.createObjectNode();
    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
      String key = e.getKey().topic() + "/" + e.getKey().partition();
      if (e.getValue().isPresent()) {
        outcomes.set(key, Driver.errorNode(e.getValue().get()));
      } else {
        outcomes.put(key, "ok");
      }
    }
    return JSON.createObjectNode().set("outcomes", outcomes);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void close(Object consumer, long timeoutMs) {
    polled.remove(consumer);
    ((KafkaShareConsumer<String, String>) consumer).close(Duration.ofMillis(timeoutMs));
  }

  @Override
  @SuppressWarnings("unchecked")
  public void wakeup(Object consumer) {
    ((KafkaShareConsumer<String, String>) consumer).wakeup();
  }

  /**
   * "set_group_config": the group's dynamic configs ({name: value}); "offsets": its start offset
   * per partition, {"topic/partition": offset} (4.2's SharePartitionOffsetInfo, 4.1's
   * OffsetAndMetadata, found by name).
   */
  @Override
  public JsonNode admin(Properties props, JsonNode cmd) throws Exception {
    String group = cmd.path("group").asText();
    try (Admin admin = Admin.create(props)) {
      long timeoutMs = cmd.path("timeout_ms").asLong(15000);
      switch (cmd.path("call").asText()) {
        case "set_group_config": {
          Collection<AlterConfigOp> ops = new ArrayList<>();
          cmd.path("configs").fields().forEachRemaining(
              e -> ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue().asText()), AlterConfigOp.OpType.SET)));
          ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
          admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
          return JSON.createObjectNode();
        }
        case "offsets": {
          Object result = admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()));
          ObjectNode offsets = JSON.createObjectNode();
          Map<TopicPartition, Object> byPartition = partitions(result, group, timeoutMs);
          for (Map.Entry<TopicPartition, Object> e : byPartition.entrySet()) {
            String key = e.getKey().topic() + "/" + e.getKey().partition();
            if (e.getValue() == null) {
              offsets.putNull(key);
            } else {
              offsets.put(key, startOffset(e.getValue()));
            }
          }
          return JSON.createObjectNode().set("offsets", offsets);
        }
        default:
          throw new IllegalArgumentException("unknown admin call " + cmd.path("call").asText());
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<TopicPartition, Object> partitions(Object result, String group, long timeoutMs) throws Exception {
    Method m;
    try {
      m = result.getClass().getMethod("partitionsToOffsetInfo", String.class); // 4.2 and later
    } catch (NoSuchMethodException e) {
      m = result.getClass().getMethod("partitionsToOffsetAndMetadata", String.class); // 4.1
    }
    org.apache.kafka.common.KafkaFuture<?> future = (org.apache.kafka.common.KafkaFuture<?>) m.invoke(result, group);
    return new HashMap<>((Map<TopicPartition, Object>) future.get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS));
  }

  private static long startOffset(Object info) throws Exception {
    for (String name : new String[] {"startOffset", "offset"}) {
      try {
        return (Long) info.getClass().getMethod(name).invoke(info);
      } catch (NoSuchMethodException e) {
        // the other version's name
      }
    }
    throw new IllegalStateException("no start offset in " + info.getClass().getName());
  }
}
