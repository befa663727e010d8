// Kafka's Java producer against one or more servers (Topograph, the benchmark's ceiling), three
// ways in one JVM, one after another:
//   plain        idempotent producer, acks=all, records sent as fast as it goes
//   plain+flush  the same, flush() after every 100 records (what a commit waits for, without one)
//   txn          transactional producer: beginTransaction, 100 records, commitTransaction
// Records: 100-byte values, round-robin over the topic's 10 partitions. Each mode warms up, then
// runs for the given seconds; in each round every server gets the three modes in turn (the servers
// taking turns to go first), `rounds` times, so that a load change on the machine hits each of them. Prints one JSON line per server,
// mode and round: records/s, for txn the commit latency percentiles (ms), and the one-minute load
// average when the mode ended.
// With a server's process id (name=bootstrap@pid), the line also has the server's CPU time (user +
// system, from /proc) per 100 records of the measured window.
// Args: topic seconds warmupSeconds rounds name=bootstrap[@pid] [name=bootstrap[@pid] ...]
// -Dmodes=txn (KAFKA_OPTS) runs only the modes named (comma-separated), e.g. under a profiler.
import java.util.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class TxnBench {
  static final int PER_TXN = 100, PARTITIONS = 10;
  static final byte[] VALUE = new byte[100];

  static Properties props(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "all");
    p.put("enable.idempotence", "true");
    p.put("linger.ms", "5");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    return p;
  }

  static void sendGroup(KafkaProducer<byte[], byte[]> producer, String topic, long[] counter) {
    for (int i = 0; i < PER_TXN; i++) {
      producer.send(new ProducerRecord<>(topic, (int) (counter[0]++ % PARTITIONS), null, VALUE));
    }
  }

  static void run(String target, String mode, String bootstrap, long pid, String topic, long seconds, long warmup) {
    Properties p = props(bootstrap);
    if (mode.equals("txn")) p.put("transactional.id", "bench-txn-" + System.nanoTime());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      if (mode.equals("txn")) producer.initTransactions();
      long[] counter = {0};
      List<Double> commits = new ArrayList<>();
      long start = System.nanoTime(), measureFrom = start + warmup * 1_000_000_000L;
      long end = measureFrom + seconds * 1_000_000_000L;
      long measuredRecords = 0;
      boolean measuring = false;
      long cpuFrom = 0;
      while (true) {
        long now = System.nanoTime();
        if (now >= end) break;
        if (!measuring && now >= measureFrom) {
          if (!mode.equals("txn")) producer.flush();
          measuring = true;
          measureFrom = System.nanoTime();
          cpuFrom = cpuTicks(pid);
          measuredRecords = 0;
          commits.clear();
        }
        if (mode.equals("txn")) {
          producer.beginTransaction();
          sendGroup(producer, topic, counter);
          long c0 = System.nanoTime();
          producer.commitTransaction();
          commits.add((System.nanoTime() - c0) / 1e6);
        } else {
          sendGroup(producer, topic, counter);
          if (mode.equals("plain+flush")) producer.flush();
        }
        measuredRecords += PER_TXN;
      }
      producer.flush();
      double elapsed = (System.nanoTime() - measureFrom) / 1e9;
      long cpu = cpuTicks(pid) - cpuFrom;
      StringBuilder out = new StringBuilder();
      out.append("{\"target\":\"").append(target).append("\",\"mode\":\"").append(mode).append("\",\"load\":").append(loadAverage())
          .append(",\"records\":").append(measuredRecords)
          .append(",\"seconds\":").append(String.format(Locale.ROOT, "%.3f", elapsed))
          .append(",\"recordsPerSec\":").append(String.format(Locale.ROOT, "%.1f", measuredRecords / elapsed));
      if (pid > 0 && measuredRecords > 0)
        out.append(",\"serverCpuMsPer100\":").append(String.format(Locale.ROOT, "%.4f", cpu * 1000.0 / TICKS / (measuredRecords / 100.0)));
      if (!commits.isEmpty()) {
        Collections.sort(commits);
        out.append(",\"commits\":").append(commits.size())
            .append(",\"commitP50Ms\":").append(String.format(Locale.ROOT, "%.2f", commits.get(commits.size() / 2)))
            .append(",\"commitP99Ms\":").append(String.format(Locale.ROOT, "%.2f", commits.get((int) Math.min(commits.size() - 1, Math.floor(commits.size() * 0.99)))));
      }
      out.append("}");
      System.out.println(out);
    }
  }

  /** Clock ticks a second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
  static final double TICKS = 100;

  /** User + system CPU time of a process in clock ticks (/proc/<pid>/stat), 0 where there is none. */
  static long cpuTicks(long pid) {
    if (pid <= 0) return 0;
    try {
      String stat = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/" + pid + "/stat")));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // After the name: state is field 3, utime field 14, stime field 15.
      return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    } catch (Exception e) {
      return 0;
    }
  }

  /** The one-minute load average (Linux /proc/loadavg), -1 where there is none. */
  static String loadAverage() {
    try {
      return new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/loadavg"))).split(" ")[0];
    } catch (Exception e) {
      return "-1";
    }
  }

  public static void main(String[] args) {
    String topic = args[0];
    long seconds = Long.parseLong(args[1]), warmup = Long.parseLong(args[2]);
    int rounds = Integer.parseInt(args[3]);
    for (int r = 0; r < rounds; r++) {
      // The servers take turns to go first, so that none always meets a JVM or a machine fresh
      // from the previous one's run.
      for (int k = 0; k < args.length - 4; k++) {
        int t = 4 + (k + r) % (args.length - 4);
        String target = args[t].substring(0, args[t].indexOf('=')), bootstrap = args[t].substring(args[t].indexOf('=') + 1);
        long pid = 0;
        if (bootstrap.contains("@")) {
          pid = Long.parseLong(bootstrap.substring(bootstrap.indexOf('@') + 1));
          bootstrap = bootstrap.substring(0, bootstrap.indexOf('@'));
        }
        for (String mode : System.getProperty("modes", "plain,plain+flush,txn").split(","))
          run(target, mode, bootstrap, pid, topic, seconds, warmup);
      }
    }
  }
}
