package kafkachaos.tiered;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager;

/**
 * kafka-chaos's own remote storage: a folder that every broker of a tiered cluster shares, for
 * the Kafka releases whose LocalTieredStorage (kafka-storage's test jar) Maven Central lacks
 * (harness/tiered.py).
 *
 * <p>The layout is LocalTieredStorage's, because the harness reads the folder to prove what was
 * tiered:
 * {@code <dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/<base offset, 20 digits>-<segment id><suffix>},
 * one file per part of a segment, each with the suffix its local counterpart has.
 *
 * <p>Every file is written under a temporary name (a dot file ending in {@code .tmp}), flushed,
 * then renamed: a reader sees a whole file or none. The log is written last and deleted first,
 * so a segment whose log is there has all its other files too.
 */
public final class FolderRemoteStorageManager implements RemoteStorageManager {

    /** The folder under {@code dir} that holds the partitions' folders, as LocalTieredStorage names it. */
    public static final String ROOT = "kafka-tiered-storage";
    /** The setting (after the broker strips {@code remote.log.storage.manager.impl.prefix}) naming the folder. */
    public static final String DIR_CONFIG = "dir";

    /** The files of one segment, by suffix. */
    enum Part {
        OFFSET_INDEX(".index"),
        TIME_INDEX(".timeindex"),
        TRANSACTION_INDEX(".txnindex"),
        PRODUCER_SNAPSHOT(".snapshot"),
        LEADER_EPOCH_CHECKPOINT(".leader_epoch_checkpoint"),
        LOG(".log");

        final String suffix;

        Part(String suffix) {
            this.suffix = suffix;
        }

        static Part of(IndexType type) {
            switch (type) {
                case OFFSET:
                    return OFFSET_INDEX;
                case TIMESTAMP:
                    return TIME_INDEX;
                case TRANSACTION:
                    return TRANSACTION_INDEX;
                case PRODUCER_SNAPSHOT:
                    return PRODUCER_SNAPSHOT;
                case LEADER_EPOCH:
                    return LEADER_EPOCH_CHECKPOINT;
                default:
                    throw new IllegalArgumentException("unknown index type " + type);
            }
        }
    }

    private static final Set<PosixFilePermission> READABLE = PosixFilePermissions.fromString("rw-r--r--");

    private volatile Path root;

    @Override
    public void configure(Map<String, ?> configs) {
        Object dir = configs.get(DIR_CONFIG);
        if (dir == null || dir.toString().isEmpty()) {
            throw new ConfigException(DIR_CONFIG, dir, "the remote storage's folder is required");
        }
        Path folder = Paths.get(dir.toString(), ROOT);
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            throw new KafkaException("cannot create the remote storage's folder " + folder, e);
        }
        root = folder;
    }

    @Override
    public Optional<CustomMetadata> copyLogSegmentData(RemoteLogSegmentMetadata segment, LogSegmentData data)
            throws RemoteStorageException {
        try {
            Files.createDirectories(partitionFolder(segment));
            copy(data.offsetIndex(), file(segment, Part.OFFSET_INDEX));
            copy(data.timeIndex(), file(segment, Part.TIME_INDEX));
            if (data.transactionIndex().isPresent()) {
                copy(data.transactionIndex().get(), file(segment, Part.TRANSACTION_INDEX));
            } else {
                Files.deleteIfExists(file(segment, Part.TRANSACTION_INDEX)); // a retry overwrites all of a copy
            }
            copy(data.producerSnapshotIndex(), file(segment, Part.PRODUCER_SNAPSHOT));
            write(data.leaderEpochIndex(), file(segment, Part.LEADER_EPOCH_CHECKPOINT));
            copy(data.logSegment(), file(segment, Part.LOG));
        } catch (IOException e) {
            throw new RemoteStorageException("cannot copy " + segment.remoteLogSegmentId() + " to " + root, e);
        }
        return Optional.empty();
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata segment, int startPosition)
            throws RemoteStorageException {
        return open(segment, Part.LOG, startPosition, Long.MAX_VALUE);
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata segment, int startPosition, int endPosition)
            throws RemoteStorageException {
        if (endPosition < startPosition) {
            throw new IllegalArgumentException("end position " + endPosition + " is before start " + startPosition);
        }
        return open(segment, Part.LOG, startPosition, endPosition);
    }

    @Override
    public InputStream fetchIndex(RemoteLogSegmentMetadata segment, IndexType indexType)
            throws RemoteStorageException {
        return open(segment, Part.of(indexType), 0, Long.MAX_VALUE);
    }

    @Override
    public void deleteLogSegmentData(RemoteLogSegmentMetadata segment) throws RemoteStorageException {
        Part[] parts = Part.values();
        try {
            for (int i = parts.length - 1; i >= 0; i--) { // the log first
                Files.deleteIfExists(file(segment, parts[i]));
            }
            // What a copy cut short (the broker stopped mid-write) left under temporary names.
            String prefix = "." + name(segment, "");
            try (DirectoryStream<Path> left = Files.newDirectoryStream(partitionFolder(segment), prefix + "*.tmp")) {
                for (Path path : left) {
                    Files.deleteIfExists(path);
                }
            } catch (NoSuchFileException e) {
                // no folder: nothing of this partition was ever copied here
            }
        } catch (IOException e) {
            throw new RemoteStorageException("cannot delete " + segment.remoteLogSegmentId() + " from " + root, e);
        }
    }

    @Override
    public void close() {
        // holds nothing open: each fetch's stream is its caller's to close
    }

    private Path partitionFolder(RemoteLogSegmentMetadata segment) {
        if (root == null) {
            throw new IllegalStateException("the remote storage is not configured");
        }
        TopicIdPartition tp = segment.remoteLogSegmentId().topicIdPartition();
        return root.resolve(tp.topic() + "-" + tp.partition() + "-" + tp.topicId());
    }

    private static String name(RemoteLogSegmentMetadata segment, String suffix) {
        return String.format("%020d-%s%s", segment.startOffset(), segment.remoteLogSegmentId().id(), suffix);
    }

    private Path file(RemoteLogSegmentMetadata segment, Part part) {
        return partitionFolder(segment).resolve(name(segment, part.suffix));
    }

    private static void copy(Path source, Path target) throws IOException {
        Path temporary = temporaryFor(target);
        try {
            Files.copy(source, temporary, StandardCopyOption.REPLACE_EXISTING);
            publish(temporary, target);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private static void write(ByteBuffer bytes, Path target) throws IOException {
        Path temporary = temporaryFor(target);
        try {
            try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
                ByteBuffer view = bytes.duplicate(); // the caller's buffer keeps its position
                while (view.hasRemaining()) {
                    out.write(view);
                }
            }
            publish(temporary, target);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private static Path temporaryFor(Path target) throws IOException {
        return Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
    }

    /**
     * Flushes `temporary`, makes it readable as LocalTieredStorage's files are (a temporary file is
     * its owner's only), and renames it to `target`, replacing what a retried copy wrote there.
     */
    private static void publish(Path temporary, Path target) throws IOException {
        try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
            out.force(true);
        }
        Files.setPosixFilePermissions(temporary, READABLE);
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private InputStream open(RemoteLogSegmentMetadata segment, Part part, long start, long endInclusive)
            throws RemoteStorageException {
        if (start < 0) {
            throw new IllegalArgumentException("start position " + start + " is negative");
        }
        Path path = file(segment, part);
        FileChannel channel;
        try {
            channel = FileChannel.open(path, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new RemoteResourceNotFoundException("no " + path.getFileName() + " in " + path.getParent(), e);
        } catch (IOException e) {
            throw new RemoteStorageException("cannot read " + path, e);
        }
        try {
            channel.position(start);
        } catch (IOException e) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the position's error is the one to report
            }
            throw new RemoteStorageException("cannot read " + path + " from " + start, e);
        }
        InputStream in = Channels.newInputStream(channel);
        return endInclusive == Long.MAX_VALUE ? in : new Bounded(in, endInclusive - start + 1);
    }

    /** At most `limit` bytes of a stream: a fetch up to an end position. */
    static final class Bounded extends FilterInputStream {
        private long remaining;

        Bounded(InputStream in, long limit) {
            super(in);
            this.remaining = limit;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                remaining--;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (remaining <= 0) {
                return length == 0 ? 0 : -1;
            }
            int n = in.read(buffer, offset, (int) Math.min(length, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(Math.min(n, remaining));
            remaining -= skipped;
            return skipped;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(in.available(), remaining);
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }
}
