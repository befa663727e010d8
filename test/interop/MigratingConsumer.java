/*
 * One member of a group during an online migration between the classic and the consumer protocol
 * (test/interop/java-consumer-migration.test.ts): Kafka's KafkaConsumer with group.protocol from the
 * arguments, subscribed to one topic from the earliest offset. A batch counts as read only once its
 * offsets are committed: a record is printed after the commitSync that covers it succeeded; when a
 * commit fails (the member is rebalancing), the partitions it still owns are rewound to the batch,
 * so their next owner, or this member, reads the batch again. Every record is then printed exactly
 * once across the members exactly when the coordinator never lets two members own a partition and
 * refuses commits from members that no longer own it.
 *
 * stdout, one line each:
 *   assigned <p>,<p>,...     the member's assignment after a rebalance callback
 *   revoked <p>,<p>,...
 *   record <partition> <offset> <key>
 *   commit-failed <exception class>
 *   closed                   after close() (the member left the group)
 *   error <class> <message>
 * stdin: a line "close" makes it close the consumer (leaving the group) and exit.
 *
 * Usage: MigratingConsumer BOOTSTRAP_SERVERS GROUP TOPIC PROTOCOL CLIENT_ID
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class MigratingConsumer {
    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String partitions(Collection<TopicPartition> tps) {
        return tps.stream().map(TopicPartition::partition).sorted().map(String::valueOf)
            .collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: MigratingConsumer BOOTSTRAP_SERVERS GROUP TOPIC PROTOCOL CLIENT_ID");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, args[3]);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, args[4]);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        if (args[3].equals("classic")) {
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        }
        AtomicBoolean closing = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.trim().equals("close")) break;
                }
            } catch (Exception e) {
                // stdin closed: close as well
            }
            closing.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        try (KafkaConsumer<String, String> consumer =
                 new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    out("revoked " + partitions(revoked));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                    out("assigned " + partitions(consumer.assignment()));
                }
            });
            while (!closing.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                Map<TopicPartition, Long> first = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    offsets.put(tp, new OffsetAndMetadata(r.offset() + 1));
                    first.putIfAbsent(tp, r.offset());
                }
                try {
                    consumer.commitSync(offsets);
                } catch (KafkaException e) {
                    out("commit-failed " + e.getClass().getName());
                    for (Map.Entry<TopicPartition, Long> f : first.entrySet()) {
                        if (consumer.assignment().contains(f.getKey())) consumer.seek(f.getKey(), f.getValue());
                    }
                    continue;
                }
                for (ConsumerRecord<String, String> r : records) {
                    out("record " + r.partition() + " " + r.offset() + " " + r.key());
                }
            }
        } catch (Exception e) {
            out("error " + e.getClass().getName() + " " + e.getMessage());
            System.exit(1);
        }
        out("closed");
    }
}
