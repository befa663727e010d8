// Kafka's Java transactional producer and a read_committed consumer against a Topograph server.
// Args: bootstrap topic. Commits "c1","c2", aborts "a1", commits "c3" (with transaction
// version 2 when the server finalizes it), then prints every value a read_committed consumer reads
// from the beginning, one per line, and "tv2=<true|false>" as the producer saw the feature.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class TxnProducer {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1];
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("transactional.id", "java-tx");
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "k", "c1"));
      producer.send(new ProducerRecord<>(topic, "k", "c2"));
      producer.commitTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "k", "a1")).get();
      producer.abortTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "k", "c3"));
      producer.commitTransaction();
    }
    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("isolation.level", "read_committed");
    c.put("key.deserializer", StringDeserializer.class.getName());
    c.put("value.deserializer", StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      List<org.apache.kafka.common.TopicPartition> tps = List.of(new org.apache.kafka.common.TopicPartition(topic, 0));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      List<String> seen = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 15000;
      while (seen.size() < 3 && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) seen.add(r.value());
      }
      for (String v : seen) System.out.println(v);
      System.out.println("end=" + consumer.position(tps.get(0)));
    }
  }
}
