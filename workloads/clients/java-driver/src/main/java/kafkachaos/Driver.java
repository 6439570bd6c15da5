package kafkachaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * kafka-chaos's driver of the official Java client: one operation per line on stdin, its
 * completion per line on stdout, both JSON. The Python side (workloads/clients/java.py) stays
 * the one writer of the history; this program only calls the client and reports what it said.
 *
 * <p>Each producer and consumer is a named handle with its own thread, so the calls on one
 * handle run in the order they arrived (begin, sends, commit) and a blocked call holds only its
 * own handle. A send's reply comes from the producer's callback. An error reply carries the
 * exception's simple class name (ExecutionException and CompletionException unwrapped), its
 * cause's, the message, and whether send() threw it itself (the record never left the client);
 * which names are fail and which info is decided in Python (workloads/outcomes.py).
 *
 * <p>End of stdin ends the process at once: a client stuck in close cannot keep it alive.
 */
public final class Driver {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, Handle> HANDLES = new ConcurrentHashMap<>();
  private static final BufferedWriter OUT =
      new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);

  /**
   * The share-group calls (share/ShareOps.java), compiled only against kafka-clients 4.1 or
   * later: null in a driver built for an older client.
   */
  public interface Share {
    AutoCloseable consumer(Properties props) throws Exception;

    JsonNode config(Properties props);

    void subscribe(Object consumer, List<String> topics);

    JsonNode poll(Object consumer, long timeoutMs);

    JsonNode ack(Object consumer, JsonNode acks, long timeoutMs);

    void close(Object consumer, long timeoutMs);

    void wakeup(Object consumer);

    JsonNode admin(Properties props, JsonNode cmd) throws Exception;
  }

  private static final Share SHARE = loadShare();

  private static Share loadShare() {
    try {
      return (Share) Class.forName("kafkachaos.share.ShareOps").getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | LinkageError e) {
      return null;
    }
  }

  private static Share share() {
    if (SHARE == null) {
      throw new UnsupportedOperationException("this kafka-clients has no share consumer (4.1 or later)");
    }
    return SHARE;
  }

  private static final class Handle {
    final ExecutorService thread;
    volatile KafkaProducer<String, String> producer;
    volatile KafkaConsumer<String, String> consumer;
    volatile AutoCloseable shareConsumer;
    volatile boolean closed;
    /** A subscribed consumer's keys after the last rebalance it saw; null once reported. */
    volatile List<String> rebalanced;

    void closeNow() {
      if (producer != null) {
        producer.close(Duration.ZERO);
      }
      if (consumer != null) {
        consumer.close(Duration.ZERO);
      }
      if (shareConsumer != null) {
        share().close(shareConsumer, 0);
      }
    }

    Handle(String name) {
      thread =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "handle-" + name);
                t.setDaemon(true);
                return t;
              });
    }
  }

  public static void main(String[] args) throws Exception {
    reply(JSON.createObjectNode().put("ready", true).put("kafka_clients", clientsVersion()));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode cmd = JSON.readTree(line);
      try {
        dispatch(cmd);
      } catch (Throwable t) { // a bad command: answer it, keep serving the others
        error(cmd.path("id").asLong(), t, false);
      }
    }
    Runtime.getRuntime().halt(0);
  }

  /** kafka-clients' version: its manifest's, else the properties file it ships (the class that
   * reads that file, AppInfoParser, left org.apache.kafka.common.utils in 4.4). */
  private static String clientsVersion() {
    String v = KafkaProducer.class.getPackage().getImplementationVersion();
    if (v != null) {
      return v;
    }
    try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
      java.util.Properties props = new java.util.Properties();
      if (in != null) {
        props.load(in);
      }
      return props.getProperty("version", "unknown");
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }

  private static void dispatch(JsonNode cmd) {
    long id = cmd.path("id").asLong();
    String op = cmd.path("op").asText();
    String name = cmd.path("name").asText();
    switch (op) {
      case "producer":
        build(id, name, cmd, "serializer", props -> {
          KafkaProducer<String, String> p = new KafkaProducer<>(props);
          return new Object[] {p, new ProducerConfig(props).values()};
        });
        return;
      case "consumer":
        build(id, name, cmd, "deserializer", props -> {
          KafkaConsumer<String, String> c = new KafkaConsumer<>(props);
          return new Object[] {c, new ConsumerConfig(props).values()};
        });
        return;
      case "share_consumer":
        {
          Properties props = properties(cmd.path("config"));
          props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
          props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
          Handle h = newHandle(name);
          on(h, id, () -> {
            h.shareConsumer = share().consumer(props);
            if (h.closed) {
              h.closeNow();
            }
            return share().config(props);
          });
          return;
        }
      case "share_admin":
        {
          Properties props = properties(cmd.path("config"));
          Thread t = new Thread(() -> {
            try {
              reply(id, share().admin(props, cmd));
            } catch (Throwable e) {
              error(id, e, false);
            }
          }, "admin-" + id);
          t.setDaemon(true);
          t.start();
          return;
        }
      case "close":
        close(id, name, cmd.path("timeout_ms").asLong(0));
        return;
      default:
        break;
    }
    Handle h = HANDLES.get(name);
    if (h == null) {
      throw new IllegalArgumentException("no handle named " + name);
    }
    switch (op) {
      case "send":
        send(h, id, cmd);
        return;
      case "init_transactions":
        on(h, id, () -> { h.producer.initTransactions(); return null; });
        return;
      case "begin_transaction":
        on(h, id, () -> { h.producer.beginTransaction(); return null; });
        return;
      case "commit_transaction":
        on(h, id, () -> { h.producer.commitTransaction(); return null; });
        return;
      case "abort_transaction":
        on(h, id, () -> { h.producer.abortTransaction(); return null; });
        return;
      case "send_offsets":
        on(h, id, () -> {
          Handle member = HANDLES.get(cmd.path("consumer").asText());
          if (member == null || member.consumer == null) {
            throw new IllegalArgumentException("no consumer named " + cmd.path("consumer").asText());
          }
          h.producer.sendOffsetsToTransaction(offsets(cmd), member.consumer.groupMetadata());
          return null;
        });
        return;
      case "assign":
        on(h, id, () -> {
          List<TopicPartition> parts = new ArrayList<>();
          for (JsonNode k : cmd.path("keys")) {
            parts.add(new TopicPartition(k.get(0).asText(), k.get(1).asInt()));
          }
          h.consumer.assign(parts);
          h.consumer.seekToBeginning(parts);
          return null;
        });
        return;
      case "poll":
        on(h, id, () -> {
          ArrayNode records = JSON.createArrayNode();
          for (ConsumerRecord<String, String> r : h.consumer.poll(Duration.ofMillis(cmd.path("timeout_ms").asLong()))) {
            records.addArray().add(r.topic()).add(r.partition()).add(r.offset()).add(r.value());
          }
          ObjectNode reply = JSON.createObjectNode();
          reply.set("records", records);
          List<String> held = h.rebalanced;
          if (held != null) { // a rebalance completed inside this poll: the keys held now
            h.rebalanced = null;
            ArrayNode keys = reply.putArray("held");
            held.forEach(keys::add);
          }
          return reply;
        });
        return;
      case "subscribe":
        on(h, id, () -> {
          List<String> topics = new ArrayList<>();
          cmd.path("topics").forEach(t -> topics.add(t.asText()));
          h.consumer.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
              held(revoked); // assignment() still lists them here
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> lost) {
              held(lost);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
              held(List.of()); // incremental under the cooperative protocol: assignment() has it all
            }

            private void held(Collection<TopicPartition> leaving) {
              List<String> keys = new ArrayList<>();
              for (TopicPartition tp : h.consumer.assignment()) {
                if (!leaving.contains(tp)) {
                  keys.add(tp.topic() + "/" + tp.partition());
                }
              }
              java.util.Collections.sort(keys);
              h.rebalanced = keys;
            }
          });
          return null;
        });
        return;
      case "commit":
        on(h, id, () -> { h.consumer.commitSync(offsets(cmd)); return null; });
        return;
      case "share_subscribe":
        on(h, id, () -> {
          List<String> topics = new ArrayList<>();
          cmd.path("topics").forEach(t -> topics.add(t.asText()));
          share().subscribe(h.shareConsumer, topics);
          return null;
        });
        return;
      case "share_poll":
        on(h, id, () -> share().poll(h.shareConsumer, cmd.path("timeout_ms").asLong()));
        return;
      case "share_ack":
        on(h, id, () -> share().ack(h.shareConsumer, cmd.path("acks"), cmd.path("timeout_ms").asLong()));
        return;
      case "position":
        on(h, id, () -> {
          TopicPartition tp = new TopicPartition(cmd.path("topic").asText(), cmd.path("partition").asInt());
          long position = h.consumer.position(tp, Duration.ofMillis(cmd.path("timeout_ms").asLong()));
          return JSON.createObjectNode().put("offset", position);
        });
        return;
      case "seek":
        on(h, id, () -> {
          TopicPartition tp = new TopicPartition(cmd.path("topic").asText(), cmd.path("partition").asInt());
          h.consumer.seek(tp, cmd.path("offset").asLong());
          return null;
        });
        return;
      default:
        throw new IllegalArgumentException("unknown op " + op);
    }
  }

  /** A command's "offsets": [[topic, partition, next offset], ...]. */
  private static Map<TopicPartition, OffsetAndMetadata> offsets(JsonNode cmd) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (JsonNode o : cmd.path("offsets")) {
      offsets.put(new TopicPartition(o.get(0).asText(), o.get(1).asInt()), new OffsetAndMetadata(o.get(2).asLong()));
    }
    return offsets;
  }

  @FunctionalInterface
  private interface Factory {
    Object[] make(Properties props) throws Exception;
  }

  /** A producer or consumer handle: String (de)serializers, built on its own thread. */
  @SuppressWarnings("unchecked")
  private static void build(long id, String name, JsonNode cmd, String serde, Factory factory) {
    Properties props = properties(cmd.path("config"));
    String kind = serde.equals("serializer") ? "Serializer" : "Deserializer";
    props.put("key." + serde, "org.apache.kafka.common.serialization.String" + kind);
    props.put("value." + serde, "org.apache.kafka.common.serialization.String" + kind);
    Handle h = newHandle(name);
    on(h, id, () -> {
      Object[] made = factory.make(props);
      if (made[0] instanceof KafkaProducer) {
        h.producer = (KafkaProducer<String, String>) made[0];
      } else {
        h.consumer = (KafkaConsumer<String, String>) made[0];
      }
      if (h.closed) { // closed before it was built
        h.closeNow();
      }
      return configNode((Map<String, ?>) made[1]);
    });
  }

  private static Handle newHandle(String name) {
    Handle h = new Handle(name);
    if (HANDLES.putIfAbsent(name, h) != null) {
      throw new IllegalArgumentException("a handle named " + name + " exists");
    }
    return h;
  }

  private static void send(Handle h, long id, JsonNode cmd) {
    ProducerRecord<String, String> record =
        new ProducerRecord<>(cmd.path("topic").asText(), cmd.path("partition").asInt(), null, cmd.path("value").asText());
    h.thread.execute(
        () -> {
          try {
            h.producer.send(
                record,
                (metadata, exception) -> {
                  if (exception != null) {
                    error(id, exception, false);
                  } else {
                    ObjectNode ok = JSON.createObjectNode();
                    if (metadata.hasOffset()) {
                      ok.put("offset", metadata.offset());
                    } else {
                      ok.putNull("offset");
                    }
                    reply(id, ok);
                  }
                });
          } catch (Throwable t) { // send() itself: the record was never handed to the client
            error(id, t, true);
          }
        });
  }

  /** A producer or consumer closed off the handle's thread (that thread may be stuck in a call). */
  private static void close(long id, String name, long timeoutMs) {
    Handle h = HANDLES.remove(name);
    if (h == null) {
      reply(id, null);
      return;
    }
    h.closed = true;
    if (h.consumer != null) {
      h.consumer.wakeup(); // a blocked position() or poll() returns, so the close can run
      h.thread.execute(
          () -> {
            try {
              h.consumer.close(Duration.ofMillis(timeoutMs));
            } catch (Throwable ignored) { // closing a broken consumer: nothing to report
            }
          });
    }
    if (h.shareConsumer != null) {
      share().wakeup(h.shareConsumer);
      h.thread.execute(
          () -> {
            try {
              share().close(h.shareConsumer, timeoutMs);
            } catch (Throwable ignored) { // closing a broken consumer: nothing to report
            }
          });
    }
    Thread closer =
        new Thread(
            () -> {
              try {
                if (h.producer != null) {
                  h.producer.close(Duration.ofMillis(timeoutMs));
                }
              } catch (Throwable ignored) { // closing a broken producer: nothing to report
              }
              h.thread.shutdown();
              reply(id, null);
            },
            "close-" + name);
    closer.setDaemon(true);
    closer.start();
  }

  @FunctionalInterface
  private interface Call {
    JsonNode run() throws Exception;
  }

  private static void on(Handle h, long id, Call call) {
    h.thread.execute(
        () -> {
          try {
            reply(id, call.run());
          } catch (Throwable t) {
            error(id, t, false);
          }
        });
  }

  private static Properties properties(JsonNode config) {
    Properties props = new Properties();
    for (Iterator<Map.Entry<String, JsonNode>> it = config.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      props.put(e.getKey(), e.getValue().asText());
    }
    return props;
  }

  /** The client's own view of its configuration, after its post-processing, as strings. */
  public static JsonNode configNode(Map<String, ?> values) {
    ObjectNode node = JSON.createObjectNode();
    for (Map.Entry<String, ?> e : new TreeMap<>(values).entrySet()) {
      Object v = e.getValue();
      if (v == null) {
        node.putNull(e.getKey());
      } else if (v instanceof Class) {
        node.put(e.getKey(), ((Class<?>) v).getName());
      } else {
        node.put(e.getKey(), String.valueOf(v));
      }
    }
    return JSON.createObjectNode().set("config", node);
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static void error(long id, Throwable thrown, boolean bySend) {
    ObjectNode err = errorNode(thrown);
    err.put("thrown_by_send", bySend);
    ObjectNode line = JSON.createObjectNode().put("id", id);
    line.set("error", err);
    write(line);
  }

  /** An exception as the Python side reads it: its simple class name, its cause's, its message. */
  public static ObjectNode errorNode(Throwable thrown) {
    Throwable t = unwrap(thrown);
    ObjectNode err = JSON.createObjectNode();
    err.put("name", t.getClass().getSimpleName());
    Throwable cause = t.getCause();
    if (cause != null && cause != t) {
      err.put("cause", cause.getClass().getSimpleName());
    }
    err.put("message", String.valueOf(t.getMessage()));
    err.put("kafka", t instanceof KafkaException);
    return err;
  }

  private static void reply(long id, JsonNode ok) {
    ObjectNode line = JSON.createObjectNode().put("id", id);
    line.set("ok", ok == null ? JSON.createObjectNode() : ok);
    write(line);
  }

  private static void reply(ObjectNode line) {
    write(line);
  }

  private static void write(ObjectNode line) {
    String text;
    try {
      text = JSON.writeValueAsString(line);
    } catch (Exception e) {
      text = "{\"id\":" + line.path("id").asLong() + ",\"error\":{\"name\":\"DriverError\",\"message\":\"unencodable reply\"}}";
    }
    synchronized (OUT) {
      try {
        OUT.write(text);
        OUT.write('\n');
        OUT.flush();
      } catch (Exception e) { // stdout gone: the Python side ended
        Runtime.getRuntime().halt(1);
      }
    }
  }
}
