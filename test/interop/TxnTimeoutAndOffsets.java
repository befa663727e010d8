// Kafka's Java clients against a Topograph server: transactional offsets and an abandoned
// transaction. Args: bootstrap topic.
//   1. "offsets-tx" sends a record and sendOffsetsToTransaction (offset 42, group java-txn-group),
//      commits; then sends offset 99 in a transaction it aborts. Prints "committed=<offset>" as
//      Admin.listConsumerGroupOffsets (requireStable) reads it after each.
//   2. "abandoned-tx" (transaction.timeout.ms=2000) sends "lost" and never ends its transaction; a
//      plain producer then appends "after". A read_committed consumer reads the partition from the
//      beginning until it has seen "after" (possible only once the coordinator aborted the abandoned
//      transaction at its timeout) and prints every value it read, one per line. Then the abandoned
//      producer tries to commit and prints "commit=<exception class>".
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class TxnTimeoutAndOffsets {
  static Properties producerProps(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    return p;
  }

  static long committed(Admin admin, TopicPartition tp) throws Exception {
    var spec = new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp));
    var offsets = admin
        .listConsumerGroupOffsets(Map.of("java-txn-group", spec), new ListConsumerGroupOffsetsOptions().requireStable(true))
        .partitionsToOffsetAndMetadata("java-txn-group")
        .get();
    OffsetAndMetadata o = offsets.get(tp);
    return o == null ? -1 : o.offset();
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1];
    TopicPartition tp = new TopicPartition(topic, 0);
    Properties ap = new Properties();
    ap.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(ap)) {
      Properties p = producerProps(bootstrap);
      p.put("transactional.id", "offsets-tx");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
        producer.initTransactions();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, 1, "k", "with-offsets"));
        producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(42)), new ConsumerGroupMetadata("java-txn-group"));
        producer.commitTransaction();
        System.out.println("committed=" + committed(admin, tp));
        producer.beginTransaction();
        producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(99)), new ConsumerGroupMetadata("java-txn-group"));
        producer.abortTransaction();
        System.out.println("committed=" + committed(admin, tp));
      }
    }

    Properties a = producerProps(bootstrap);
    a.put("transactional.id", "abandoned-tx");
    a.put("transaction.timeout.ms", "2000");
    KafkaProducer<String, String> abandoned = new KafkaProducer<>(a);
    abandoned.initTransactions();
    abandoned.beginTransaction();
    abandoned.send(new ProducerRecord<>(topic, 0, "k", "lost")).get();
    try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProps(bootstrap))) {
      plain.send(new ProducerRecord<>(topic, 0, "k", "after")).get();
    }
    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("isolation.level", "read_committed");
    c.put("key.deserializer", StringDeserializer.class.getName());
    c.put("value.deserializer", StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      List<String> seen = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 30000;
      while (!seen.contains("after") && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) seen.add(r.value());
      }
      for (String v : seen) System.out.println(v);
    }
    try {
      abandoned.commitTransaction();
      System.out.println("commit=ok");
    } catch (Exception e) {
      System.out.println("commit=" + e.getClass().getSimpleName());
    }
    abandoned.close(Duration.ZERO);
  }
}
