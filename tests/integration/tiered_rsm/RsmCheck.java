import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

import kafkachaos.tiered.FolderRemoteStorageManager;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager.IndexType;

/**
 * Our RemoteStorageManager (harness/tiered-rsm/) called as a broker calls it, against Kafka's own
 * classes, without a broker: tests/integration/test_tiered_rsm.py runs it with the remote folder
 * and the segment's source folder as arguments, then reads the folder as the harness does. It
 * leaves one segment (topic "my-topic", partition 3, base offset 1234) in the folder, and deletes
 * another. Any failed expectation: a line on stderr and exit 1.
 */
public class RsmCheck {
    static void expect(boolean ok, String what) {
        if (!ok) {
            System.err.println("FAILED: " + what);
            System.exit(1);
        }
    }

    static RemoteLogSegmentMetadata segment(TopicIdPartition tp, long base) {
        return new RemoteLogSegmentMetadata(
                RemoteLogSegmentId.generateNew(tp), base, base + 99, 0L, 1, 0L, 1000, Collections.singletonMap(0, base));
    }

    public static void main(String[] args) throws Exception {
        Path remote = Paths.get(args[0]);
        Path source = Paths.get(args[1]);
        byte[] log = new byte[1000];
        for (int i = 0; i < log.length; i++) {
            log[i] = (byte) i;
        }
        Files.write(source.resolve("s.log"), log);
        Files.write(source.resolve("s.index"), new byte[] {1, 2});
        Files.write(source.resolve("s.timeindex"), new byte[] {3});
        Files.write(source.resolve("s.snapshot"), new byte[] {4, 4});
        Files.write(source.resolve("s.txnindex"), new byte[] {5});
        byte[] epochs = "0\n1\n0 1234\n".getBytes(StandardCharsets.UTF_8);
        ByteBuffer epochBuffer = ByteBuffer.wrap(epochs);
        LogSegmentData withoutTxn = new LogSegmentData(source.resolve("s.log"), source.resolve("s.index"),
                source.resolve("s.timeindex"), Optional.empty(), source.resolve("s.snapshot"), epochBuffer);
        LogSegmentData withTxn = new LogSegmentData(source.resolve("s.log"), source.resolve("s.index"),
                source.resolve("s.timeindex"), Optional.of(source.resolve("s.txnindex")), source.resolve("s.snapshot"),
                epochBuffer);

        TopicIdPartition tp = new TopicIdPartition(Uuid.randomUuid(), 3, "my-topic");
        RemoteLogSegmentMetadata kept = segment(tp, 1234);
        RemoteLogSegmentMetadata deleted = segment(tp, 1334);
        FolderRemoteStorageManager rsm = new FolderRemoteStorageManager();
        rsm.configure(Map.of("dir", remote.toString(), "broker.id", 1));

        rsm.copyLogSegmentData(kept, withTxn);
        rsm.copyLogSegmentData(kept, withoutTxn); // a retried copy overwrites what the first wrote
        expect(epochBuffer.position() == 0, "the leader epochs' buffer is the caller's, untouched");
        rsm.copyLogSegmentData(deleted, withTxn);

        expect(Arrays.equals(rsm.fetchLogSegment(kept, 0).readAllBytes(), log), "the whole log");
        expect(Arrays.equals(rsm.fetchLogSegment(kept, 10).readAllBytes(), Arrays.copyOfRange(log, 10, 1000)),
                "the log from position 10");
        expect(Arrays.equals(rsm.fetchLogSegment(kept, 10, 19).readAllBytes(), Arrays.copyOfRange(log, 10, 20)),
                "positions 10 to 19, the end inclusive");
        expect(Arrays.equals(rsm.fetchLogSegment(kept, 990, 5000).readAllBytes(), Arrays.copyOfRange(log, 990, 1000)),
                "an end past the log ends with the log");
        expect(Arrays.equals(rsm.fetchIndex(kept, IndexType.OFFSET).readAllBytes(), new byte[] {1, 2}), "offsets");
        expect(Arrays.equals(rsm.fetchIndex(kept, IndexType.TIMESTAMP).readAllBytes(), new byte[] {3}), "times");
        expect(Arrays.equals(rsm.fetchIndex(kept, IndexType.PRODUCER_SNAPSHOT).readAllBytes(), new byte[] {4, 4}),
                "the producer snapshot");
        expect(Arrays.equals(rsm.fetchIndex(kept, IndexType.LEADER_EPOCH).readAllBytes(), epochs),
                "the leader epochs");
        expect(Arrays.equals(rsm.fetchIndex(deleted, IndexType.TRANSACTION).readAllBytes(), new byte[] {5}),
                "the transaction index");
        try {
            rsm.fetchIndex(kept, IndexType.TRANSACTION);
            expect(false, "no transaction index in the retried copy: not found");
        } catch (RemoteResourceNotFoundException expected) {
            // as the interface asks, rather than null
        }

        InputStream open = rsm.fetchLogSegment(deleted, 0);
        rsm.deleteLogSegmentData(deleted);
        rsm.deleteLogSegmentData(deleted); // idempotent
        expect(open.readAllBytes().length == 1000, "a fetch begun before a delete reads on");
        try {
            rsm.fetchLogSegment(deleted, 0);
            expect(false, "a deleted segment: not found");
        } catch (RemoteResourceNotFoundException expected) {
            // gone
        }
        rsm.deleteLogSegmentData(segment(new TopicIdPartition(Uuid.randomUuid(), 0, "never"), 0));
        rsm.close();
        System.out.println(tp.topicId() + " " + kept.remoteLogSegmentId().id());
    }
}
