/*
 * A steady idempotent produce (acks=all) for the crash test: record i has key "k<i>", value
 * "seq-<i>" and goes to partition i % PARTITIONS, at about RATE records per second, until TOTAL
 * records were sent; then it flushes and exits.
 *
 * stdout, one line each, in the order the producer completes them (per partition, the send order):
 *   ack <i> <partition> <offset>      the broker acknowledged record i at that offset
 *   fail <i> <exception class> <message>
 *   done acked=<n> failed=<m>         after the final flush
 *
 * Usage: SustainedProducer BOOTSTRAP_SERVERS TOPIC PARTITIONS TOTAL RATE
 */
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class SustainedProducer {
    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: SustainedProducer BOOTSTRAP_SERVERS TOPIC PARTITIONS TOTAL RATE");
            System.exit(2);
        }
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        int total = Integer.parseInt(args[3]);
        int rate = Integer.parseInt(args[4]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "interop-sustained-producer");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "180000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "180000");
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long start = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < total; i++) {
                // pacing: record i is sent no earlier than i / RATE seconds after the start
                long due = start + (long) i * 1_000_000_000L / rate;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                }
                final int n = i;
                producer.send(new ProducerRecord<>(topic, i % partitions,
                        ("k" + i).getBytes(StandardCharsets.UTF_8), ("seq-" + i).getBytes(StandardCharsets.UTF_8)),
                    (meta, e) -> {
                        String line;
                        if (e == null) {
                            acked.incrementAndGet();
                            line = "ack " + n + " " + meta.partition() + " " + meta.offset();
                        } else {
                            failed.incrementAndGet();
                            line = "fail " + n + " " + e.getClass().getName() + " " + e.getMessage();
                        }
                        synchronized (System.out) {
                            System.out.println(line);
                            System.out.flush();
                        }
                    });
            }
            producer.flush();
        }
        synchronized (System.out) {
            System.out.println("done acked=" + acked.get() + " failed=" + failed.get());
            System.out.flush();
        }
    }
}
