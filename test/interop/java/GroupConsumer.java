/*
 * One member of a consumer group, for the group-protocol interop tests: Kafka's KafkaConsumer with
 * group.protocol from the arguments (consumer: KIP-848; classic), subscribed to one topic (or, with
 * TOPIC `regex:<pattern>`, to the broker-side pattern of KIP-848, SubscriptionPattern), reading from
 * the earliest offset and committing synchronously after every poll that returned records.
 *
 * MODE (optional):
 *   print          (default) prints each record as it is polled, then commits the poll
 *   commit-first   prints a poll's records only after the commitSync covering them succeeded; when
 *                  the commit fails (the member is rebalancing), rewinds the partitions it still
 *                  owns to the poll's first offsets, so their next owner, or this member, reads
 *                  them again. Every record is then printed exactly once across the members exactly
 *                  when the coordinator never lets two members own a partition and refuses commits
 *                  from members that no longer own it (the migration test). Classic members use a
 *                  500 ms heartbeat and a 10 s session in this mode.
 *
 * stdout, one line each:
 *   assigned <p>,<p>,...     the rebalance listener's assignment (after revocations); with a
 *                            pattern each entry is <topic>-<p>
 *   revoked <p>,<p>,...
 *   record <partition> <offset> <value>      (print mode)
 *   record <partition> <offset> <key>        (commit-first mode)
 *   committed                after a commit following records (print mode)
 *   commit-failed <class>    (commit-first mode)
 *   closed                   after close() (the member left the group)
 *   error <class> <message>
 * stdin: a line "close" makes it close the consumer (leaving the group) and exit.
 *
 * Usage: GroupConsumer BOOTSTRAP_SERVERS GROUP TOPIC PROTOCOL CLIENT_ID [print|commit-first]
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
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class GroupConsumer {
    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static boolean withTopics;

    private static String partitions(Collection<TopicPartition> tps) {
        if (withTopics) {
            return tps.stream().map(TopicPartition::toString).sorted().collect(Collectors.joining(","));
        }
        return tps.stream().map(TopicPartition::partition).sorted().map(String::valueOf)
            .collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length == 6 ? args[5] : "print";
        if ((args.length != 5 && args.length != 6) || !(mode.equals("print") || mode.equals("commit-first"))) {
            System.err.println("usage: GroupConsumer BOOTSTRAP_SERVERS GROUP TOPIC PROTOCOL CLIENT_ID [print|commit-first]");
            System.exit(2);
        }
        boolean commitFirst = mode.equals("commit-first");
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, args[3]);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, args[4]);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20");
        if (commitFirst && args[3].equals("classic")) {
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
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    out("revoked " + partitions(revoked));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                    out("assigned " + partitions(consumer.assignment()));
                }
            };
            withTopics = args[2].startsWith("regex:");
            if (withTopics) {
                consumer.subscribe(new SubscriptionPattern(args[2].substring("regex:".length())), listener);
            } else {
                consumer.subscribe(List.of(args[2]), listener);
            }
            while (!closing.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (commitFirst) {
                    commitThenPrint(consumer, records);
                    continue;
                }
                for (ConsumerRecord<String, String> r : records) {
                    out("record " + r.partition() + " " + r.offset() + " " + r.value());
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    out("committed");
                }
            }
        } catch (Exception e) {
            out("error " + e.getClass().getName() + " " + e.getMessage());
            System.exit(1);
        }
        out("closed");
    }

    private static void commitThenPrint(KafkaConsumer<String, String> consumer, ConsumerRecords<String, String> records) {
        if (records.isEmpty()) return;
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
            return;
        }
        for (ConsumerRecord<String, String> r : records) {
            out("record " + r.partition() + " " + r.offset() + " " + r.key());
        }
    }
}
