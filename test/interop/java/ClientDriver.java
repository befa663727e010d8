/*
 * Kafka's own Java producer, consumer and Admin client, driven by the interop tests over stdin and
 * stdout: one JSON request per line in, one JSON answer per line out, so that a test file starts one
 * JVM for all its calls.
 *
 *   {"op":"produce","config":{...},"records":[{"topic":"t","partition":0,"key":"k","value":"v",
 *        "headers":[["h","x"]],"timestamp":1700000000000}]}
 *     -> {"ok":true,"result":[{"partition":0,"offset":0,"timestamp":1700000000000}, ...]}
 *   {"op":"consume","config":{...},"subscribe":["t"] | "assign":[["t",0]],
 *        "seek":"beginning" | {"offsets":[["t",0,5]]} | {"timestamps":[["t",0,1700000000000]]},
 *        "maxRecords":10,"timeoutMs":30000,"commit":true,"valueFormat":"string"|"long"}
 *     -> {"ok":true,"result":{"records":[...],"committed":[["t",0,10]],"offsetsForTimes":[...]}}
 *   {"op":"createTopics","topics":[{"name":"t","partitions":3,"configs":{"k":"v"}}]}
 *   {"op":"deleteRecords","partitions":[["t",0,5]]}                -> [["t",0,lowWatermark]]
 *   {"op":"listOffsets","spec":"earliest|latest|maxTimestamp|<timestamp>","isolation":"read_committed",
 *        "partitions":[["t",0]]}                                   -> [{"topic","partition","offset","timestamp","leaderEpoch"}]
 *   {"op":"describeProducers","partitions":[["t",0]]}              -> [{"topic","partition","producers":[...]}]
 *   {"op":"describeConfigs","topic":"t","names":["cleanup.policy"]} -> {"cleanup.policy":"compact"}
 *   {"op":"alterTopicConfigs","topic":"t","set":{"k":"v"}}
 *   {"op":"listStreamsGroupOffsets","group":"g"}                   -> [["t",0,offset]]
 *   {"op":"describeTopics","topics":["t"]}                         -> {"t":[0,1,2]}
 *   {"op":"describeAuthorizedOperations","topics":["a","b"]}
 *     -> {"topics":{"a":["ALTER",...],"b":[...]},"cluster":["ALTER",...]} (one describeTopics per
 *        topic and a describeCluster, all started before any is awaited; operation names sorted)
 *   {"op":"describeLogDirs"}                                       -> [{"topic","partition","size"}]
 *   {"op":"alterUserScramCredentials","upsertions":[{"user":"u","mechanism":"SCRAM-SHA-512",
 *        "iterations":8192,"password":"p"}],"deletions":[{"user":"u","mechanism":"SCRAM-SHA-256"}]}
 *     -> {"u":null | "ExceptionClass: message"} (one alterUserScramCredentials call, outcome per user)
 *   {"op":"describeUserScramCredentials","users":["u"] | absent for all}
 *     -> {"u":[["SCRAM-SHA-512",8192]]} (users sorted), or the failure of the whole call
 *
 * A failure answers {"ok":false,"error":{"class":"...","message":"..."}}; the exception behind an
 * ExecutionException is the one reported. Records' keys, values and header values are UTF-8 strings
 * (null stays null); "valueFormat":"long" reads 8-byte big-endian values (LongSerializer's format),
 * and the long of a 16-byte value (a timestamped store's changelog record: timestamp, then value).
 *
 * Usage: ClientDriver BOOTSTRAP_SERVERS
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ClientDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String bootstrap;
    private Admin admin;

    private ClientDriver(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ClientDriver BOOTSTRAP_SERVERS");
            System.exit(2);
        }
        ClientDriver driver = new ClientDriver(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("{\"ready\":true}");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer = JSON.createObjectNode();
            try {
                answer.set("result", driver.call(JSON.readTree(line)));
                answer.put("ok", true);
            } catch (Throwable t) {
                Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
                answer.put("ok", false);
                ObjectNode error = answer.putObject("error");
                error.put("class", cause.getClass().getName());
                error.put("message", cause.getMessage());
            }
            System.out.println(JSON.writeValueAsString(answer));
            System.out.flush();
        }
        if (driver.admin != null) {
            driver.admin.close(Duration.ofSeconds(10));
        }
    }

    private JsonNode call(JsonNode req) throws Exception {
        String op = req.path("op").asText();
        switch (op) {
            case "produce":
                return produce(req);
            case "consume":
                return consume(req);
            case "createTopics":
                return createTopics(req);
            case "deleteRecords":
                return deleteRecords(req);
            case "listOffsets":
                return listOffsets(req);
            case "describeProducers":
                return describeProducers(req);
            case "describeConfigs":
                return describeConfigs(req);
            case "alterTopicConfigs":
                return alterTopicConfigs(req);
            case "listStreamsGroupOffsets":
                return listStreamsGroupOffsets(req);
            case "describeTopics":
                return describeTopics(req);
            case "describeAuthorizedOperations":
                return describeAuthorizedOperations(req);
            case "describeLogDirs":
                return describeLogDirs();
            case "alterClientQuotas":
                return alterClientQuotas(req);
            case "describeClientQuotas":
                return describeClientQuotas();
            case "alterUserScramCredentials":
                return alterUserScramCredentials(req);
            case "describeUserScramCredentials":
                return describeUserScramCredentials(req);
            case "electLeaders":
                return electLeaders(req);
            case "alterPartitionReassignments":
                return alterPartitionReassignments(req);
            case "listPartitionReassignments":
                return listPartitionReassignments();
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private Admin admin() {
        if (admin == null) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(AdminClientConfig.CLIENT_ID_CONFIG, "interop-admin");
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
            admin = Admin.create(p);
        }
        return admin;
    }

    private static Properties config(JsonNode req, Map<String, String> defaults) {
        Properties p = new Properties();
        p.putAll(defaults);
        Iterator<Map.Entry<String, JsonNode>> it = req.path("config").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            p.put(e.getKey(), e.getValue().asText());
        }
        return p;
    }

    private static byte[] bytes(JsonNode n) {
        return n == null || n.isNull() || n.isMissingNode() ? null : n.asText().getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private static TopicPartition tp(JsonNode pair) {
        return new TopicPartition(pair.get(0).asText(), pair.get(1).asInt());
    }

    // --- producer ---------------------------------------------------------------------------------

    private JsonNode produce(JsonNode req) throws Exception {
        Map<String, String> defaults = new HashMap<>();
        defaults.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        defaults.put(ProducerConfig.CLIENT_ID_CONFIG, "interop-producer");
        Properties p = config(req, defaults);
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (JsonNode r : req.path("records")) {
                List<Header> headers = new ArrayList<>();
                for (JsonNode h : r.path("headers")) {
                    headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
                }
                Integer partition = r.has("partition") ? r.get("partition").asInt() : null;
                Long timestamp = r.has("timestamp") ? r.get("timestamp").asLong() : null;
                acks.add(producer.send(new ProducerRecord<>(r.get("topic").asText(), partition, timestamp,
                    bytes(r.get("key")), bytes(r.get("value")), headers)));
            }
            producer.flush();
            ArrayNode out = JSON.createArrayNode();
            for (Future<RecordMetadata> f : acks) {
                RecordMetadata m = f.get();
                ObjectNode o = out.addObject();
                o.put("partition", m.partition());
                o.put("offset", m.offset());
                o.put("timestamp", m.timestamp());
            }
            return out;
        }
    }

    // --- consumer ---------------------------------------------------------------------------------

    private JsonNode consume(JsonNode req) throws Exception {
        Map<String, String> defaults = new HashMap<>();
        defaults.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        defaults.put(ConsumerConfig.CLIENT_ID_CONFIG, "interop-consumer");
        defaults.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        defaults.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Properties p = config(req, defaults);
        int maxRecords = req.path("maxRecords").asInt(Integer.MAX_VALUE);
        long deadline = System.currentTimeMillis() + req.path("timeoutMs").asLong(30000);
        boolean commit = req.path("commit").asBoolean(false);
        String valueFormat = req.path("valueFormat").asText("string");
        ObjectNode result = JSON.createObjectNode();
        ArrayNode records = result.putArray("records");
        try (KafkaConsumer<byte[], byte[]> consumer =
                 new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            if (req.has("subscribe")) {
                List<String> topics = new ArrayList<>();
                req.get("subscribe").forEach(t -> topics.add(t.asText()));
                consumer.subscribe(topics);
            } else {
                List<TopicPartition> parts = new ArrayList<>();
                req.get("assign").forEach(pair -> parts.add(tp(pair)));
                consumer.assign(parts);
            }
            JsonNode seek = req.path("seek");
            if (seek.isTextual() && seek.asText().equals("beginning")) {
                consumer.seekToBeginning(consumer.assignment());
            } else if (seek.has("offsets")) {
                for (JsonNode o : seek.get("offsets")) {
                    consumer.seek(tp(o), o.get(2).asLong());
                }
            } else if (seek.has("timestamps")) {
                Map<TopicPartition, Long> query = new LinkedHashMap<>();
                for (JsonNode o : seek.get("timestamps")) {
                    query.put(tp(o), o.get(2).asLong());
                }
                Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
                ArrayNode oft = result.putArray("offsetsForTimes");
                for (TopicPartition t : query.keySet()) {
                    OffsetAndTimestamp ot = found.get(t);
                    ObjectNode o = oft.addObject();
                    o.put("topic", t.topic());
                    o.put("partition", t.partition());
                    if (ot == null) {
                        o.putNull("offset");
                        o.putNull("timestamp");
                    } else {
                        o.put("offset", ot.offset());
                        o.put("timestamp", ot.timestamp());
                        consumer.seek(t, ot.offset());
                    }
                }
            }
            Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>();
            while (records.size() < maxRecords && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    if (records.size() >= maxRecords) {
                        break;
                    }
                    records.add(record(r, valueFormat));
                    toCommit.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                if (commit && !toCommit.isEmpty()) {
                    consumer.commitSync(toCommit);
                    toCommit.clear();
                }
            }
            if (req.has("subscribe")) {
                ArrayNode committed = result.putArray("committed");
                Map<TopicPartition, OffsetAndMetadata> c = consumer.committed(consumer.assignment());
                List<TopicPartition> sorted = new ArrayList<>(c.keySet());
                sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
                for (TopicPartition t : sorted) {
                    if (c.get(t) != null) {
                        committed.add(JSON.createArrayNode().add(t.topic()).add(t.partition()).add(c.get(t).offset()));
                    }
                }
            }
        }
        return result;
    }

    private static ObjectNode record(ConsumerRecord<byte[], byte[]> r, String valueFormat) {
        ObjectNode o = JSON.createObjectNode();
        o.put("topic", r.topic());
        o.put("partition", r.partition());
        o.put("offset", r.offset());
        o.put("timestamp", r.timestamp());
        o.put("timestampType", r.timestampType().toString());
        o.put("key", text(r.key()));
        if (valueFormat.equals("long") && r.value() != null && r.value().length == 8) {
            o.put("value", ByteBuffer.wrap(r.value()).getLong());
        } else if (valueFormat.equals("long") && r.value() != null && r.value().length == 16) {
            o.put("value", ByteBuffer.wrap(r.value()).getLong(8));
        } else {
            o.put("value", text(r.value()));
        }
        ArrayNode headers = o.putArray("headers");
        for (Header h : r.headers()) {
            headers.add(JSON.createArrayNode().add(h.key()).add(text(h.value())));
        }
        if (r.leaderEpoch().isPresent()) {
            o.put("leaderEpoch", r.leaderEpoch().get());
        } else {
            o.putNull("leaderEpoch");
        }
        return o;
    }

    // --- admin ------------------------------------------------------------------------------------

    private JsonNode createTopics(JsonNode req) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonNode t : req.path("topics")) {
            NewTopic nt = new NewTopic(t.get("name").asText(), t.path("partitions").asInt(1), (short) 1);
            Map<String, String> configs = new HashMap<>();
            t.path("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
            topics.add(nt.configs(configs));
        }
        admin().createTopics(topics).all().get();
        return JSON.nullNode();
    }

    private JsonNode deleteRecords(JsonNode req) throws Exception {
        Map<TopicPartition, RecordsToDelete> del = new LinkedHashMap<>();
        for (JsonNode o : req.path("partitions")) {
            del.put(tp(o), RecordsToDelete.beforeOffset(o.get(2).asLong()));
        }
        Map<TopicPartition, org.apache.kafka.common.KafkaFuture<DeletedRecords>> res =
            admin().deleteRecords(del).lowWatermarks();
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition t : del.keySet()) {
            out.add(JSON.createArrayNode().add(t.topic()).add(t.partition()).add(res.get(t).get().lowWatermark()));
        }
        return out;
    }

    private JsonNode listOffsets(JsonNode req) throws Exception {
        String spec = req.path("spec").asText();
        OffsetSpec s;
        switch (spec) {
            case "earliest":
                s = OffsetSpec.earliest();
                break;
            case "latest":
                s = OffsetSpec.latest();
                break;
            case "maxTimestamp":
                s = OffsetSpec.maxTimestamp();
                break;
            default:
                s = OffsetSpec.forTimestamp(Long.parseLong(spec));
        }
        Map<TopicPartition, OffsetSpec> query = new LinkedHashMap<>();
        for (JsonNode o : req.path("partitions")) {
            query.put(tp(o), s);
        }
        ListOffsetsOptions options = new ListOffsetsOptions(
            "read_committed".equals(req.path("isolation").asText())
                ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED);
        ListOffsetsResult res = admin().listOffsets(query, options);
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition t : query.keySet()) {
            ListOffsetsResult.ListOffsetsResultInfo info = res.partitionResult(t).get();
            ObjectNode o = out.addObject();
            o.put("topic", t.topic());
            o.put("partition", t.partition());
            o.put("offset", info.offset());
            o.put("timestamp", info.timestamp());
            if (info.leaderEpoch().isPresent()) {
                o.put("leaderEpoch", info.leaderEpoch().get());
            } else {
                o.putNull("leaderEpoch");
            }
        }
        return out;
    }

    private JsonNode describeProducers(JsonNode req) throws Exception {
        List<TopicPartition> parts = new ArrayList<>();
        req.path("partitions").forEach(o -> parts.add(tp(o)));
        var res = admin().describeProducers(parts);
        ArrayNode out = JSON.createArrayNode();
        for (TopicPartition t : parts) {
            PartitionProducerState state = res.partitionResult(t).get();
            ObjectNode o = out.addObject();
            o.put("topic", t.topic());
            o.put("partition", t.partition());
            ArrayNode producers = o.putArray("producers");
            List<ProducerState> sorted = new ArrayList<>(state.activeProducers());
            sorted.sort(Comparator.comparingLong(ProducerState::producerId));
            for (ProducerState ps : sorted) {
                ObjectNode po = producers.addObject();
                po.put("producerId", ps.producerId());
                po.put("producerEpoch", ps.producerEpoch());
                po.put("lastSequence", ps.lastSequence());
                po.put("lastTimestamp", ps.lastTimestamp());
                if (ps.coordinatorEpoch().isPresent()) {
                    po.put("coordinatorEpoch", ps.coordinatorEpoch().getAsInt());
                } else {
                    po.putNull("coordinatorEpoch");
                }
                if (ps.currentTransactionStartOffset().isPresent()) {
                    po.put("currentTransactionStartOffset", ps.currentTransactionStartOffset().getAsLong());
                } else {
                    po.putNull("currentTransactionStartOffset");
                }
            }
        }
        return out;
    }

    private JsonNode describeConfigs(JsonNode req) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, req.path("topic").asText());
        Config config = admin().describeConfigs(List.of(r)).all().get().get(r);
        ObjectNode out = JSON.createObjectNode();
        for (JsonNode n : req.path("names")) {
            ConfigEntry e = config.get(n.asText());
            if (e == null) {
                out.putNull(n.asText());
            } else {
                out.put(n.asText(), e.value());
            }
        }
        return out;
    }

    private JsonNode alterTopicConfigs(JsonNode req) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, req.path("topic").asText());
        List<AlterConfigOp> ops = new ArrayList<>();
        req.path("set").fields().forEachRemaining(e ->
            ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue().asText()), AlterConfigOp.OpType.SET)));
        admin().incrementalAlterConfigs(Map.of(r, ops)).all().get();
        return JSON.nullNode();
    }

    private JsonNode listStreamsGroupOffsets(JsonNode req) throws Exception {
        String group = req.path("group").asText();
        Map<TopicPartition, OffsetAndMetadata> offsets = admin()
            .listStreamsGroupOffsets(Map.of(group, new ListStreamsGroupOffsetsSpec()))
            .partitionsToOffsetAndMetadata(group).get();
        ArrayNode out = JSON.createArrayNode();
        offsets.entrySet().stream()
            .sorted(Comparator.comparing((Map.Entry<TopicPartition, OffsetAndMetadata> e) -> e.getKey().topic())
                .thenComparingInt(e -> e.getKey().partition()))
            .forEach(e -> out.add(JSON.createArrayNode().add(e.getKey().topic()).add(e.getKey().partition())
                .add(e.getValue() == null ? -1 : e.getValue().offset())));
        return out;
    }

    private JsonNode describeTopics(JsonNode req) throws Exception {
        List<String> names = new ArrayList<>();
        req.path("topics").forEach(t -> names.add(t.asText()));
        Map<String, TopicDescription> d = admin().describeTopics(names).allTopicNames().get();
        ObjectNode out = JSON.createObjectNode();
        for (String n : names) {
            ArrayNode parts = out.putArray(n);
            d.get(n).partitions().forEach(p -> parts.add(p.partition()));
        }
        return out;
    }

    private JsonNode describeAuthorizedOperations(JsonNode req) throws Exception {
        List<String> names = new ArrayList<>();
        req.path("topics").forEach(t -> names.add(t.asText()));
        Map<String, KafkaFuture<TopicDescription>> pending = new LinkedHashMap<>();
        for (String n : names) {
            pending.put(n, admin().describeTopics(List.of(n),
                new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames()
                .thenApply(d -> d.get(n)));
        }
        KafkaFuture<Set<AclOperation>> cluster = admin()
            .describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
            .authorizedOperations();
        ObjectNode out = JSON.createObjectNode();
        ObjectNode topics = out.putObject("topics");
        for (Map.Entry<String, KafkaFuture<TopicDescription>> e : pending.entrySet()) {
            topics.set(e.getKey(), operationNames(e.getValue().get().authorizedOperations()));
        }
        out.set("cluster", operationNames(cluster.get()));
        return out;
    }

    private static ArrayNode operationNames(Set<AclOperation> ops) {
        ArrayNode out = JSON.createArrayNode();
        if (ops == null) return out;
        ops.stream().map(Enum::name).sorted().forEach(out::add);
        return out;
    }

    private JsonNode describeLogDirs() throws Exception {
        Map<Integer, Map<String, LogDirDescription>> all =
            admin().describeLogDirs(List.of(admin().describeCluster().nodes().get().iterator().next().id()))
                .allDescriptions().get();
        ArrayNode out = JSON.createArrayNode();
        for (Map<String, LogDirDescription> dirs : all.values()) {
            for (LogDirDescription dir : dirs.values()) {
                for (Map.Entry<TopicPartition, ReplicaInfo> e : dir.replicaInfos().entrySet()) {
                    ObjectNode o = out.addObject();
                    o.put("topic", e.getKey().topic());
                    o.put("partition", e.getKey().partition());
                    o.put("size", e.getValue().size());
                }
            }
        }
        return out;
    }

    /** req.entries: [{entity: {type: name|null}, ops: {key: value|null}}]; null removes. */
    private JsonNode alterClientQuotas(JsonNode req) throws Exception {
        List<ClientQuotaAlteration> alterations = new ArrayList<>();
        for (JsonNode e : req.path("entries")) {
            Map<String, String> entity = new HashMap<>();
            e.path("entity").fields().forEachRemaining(f -> entity.put(f.getKey(), f.getValue().isNull() ? null : f.getValue().asText()));
            List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
            e.path("ops").fields().forEachRemaining(f -> ops.add(new ClientQuotaAlteration.Op(f.getKey(), f.getValue().isNull() ? null : f.getValue().asDouble())));
            alterations.add(new ClientQuotaAlteration(new ClientQuotaEntity(entity), ops));
        }
        admin().alterClientQuotas(alterations).all().get();
        return JSON.createObjectNode();
    }

    /** Every entity with its quotas: [{entity: {type: name|null}, quotas: {key: value}}]. */
    private JsonNode describeClientQuotas() throws Exception {
        Map<ClientQuotaEntity, Map<String, Double>> all = admin().describeClientQuotas(ClientQuotaFilter.all()).entities().get();
        ArrayNode out = JSON.createArrayNode();
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : all.entrySet()) {
            ObjectNode o = out.addObject();
            ObjectNode entity = o.putObject("entity");
            e.getKey().entries().forEach((k, v) -> entity.put(k, v));
            ObjectNode quotas = o.putObject("quotas");
            e.getValue().forEach((k, v) -> quotas.put(k, v));
        }
        return out;
    }

    private JsonNode alterUserScramCredentials(JsonNode req) throws Exception {
        List<UserScramCredentialAlteration> alterations = new ArrayList<>();
        for (JsonNode u : req.path("upsertions")) {
            alterations.add(new UserScramCredentialUpsertion(u.path("user").asText(),
                new ScramCredentialInfo(ScramMechanism.fromMechanismName(u.path("mechanism").asText()),
                    u.path("iterations").asInt()),
                u.path("password").asText()));
        }
        for (JsonNode d : req.path("deletions")) {
            alterations.add(new UserScramCredentialDeletion(d.path("user").asText(),
                ScramMechanism.fromMechanismName(d.path("mechanism").asText())));
        }
        Map<String, KafkaFuture<Void>> results = admin().alterUserScramCredentials(alterations).values();
        ObjectNode out = JSON.createObjectNode();
        for (String user : new java.util.TreeSet<>(results.keySet())) {
            try {
                results.get(user).get();
                out.putNull(user);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                out.put(user, cause.getClass().getSimpleName() + ": " + cause.getMessage());
            }
        }
        return out;
    }

    private JsonNode describeUserScramCredentials(JsonNode req) throws Exception {
        Map<String, UserScramCredentialsDescription> all;
        if (req.path("users").isArray()) {
            List<String> users = new ArrayList<>();
            req.path("users").forEach(u -> users.add(u.asText()));
            all = admin().describeUserScramCredentials(users).all().get();
        } else {
            all = admin().describeUserScramCredentials().all().get();
        }
        ObjectNode out = JSON.createObjectNode();
        for (String user : new java.util.TreeSet<>(all.keySet())) {
            ArrayNode infos = out.putArray(user);
            all.get(user).credentialInfos().stream()
                .sorted(Comparator.comparing(i -> i.mechanism().mechanismName()))
                .forEach(i -> infos.addArray().add(i.mechanism().mechanismName()).add(i.iterations()));
        }
        return out;
    }

    private static TopicPartition topicPartition(JsonNode tp) {
        return new TopicPartition(tp.get(0).asText(), tp.get(1).asInt());
    }

    private static void putOutcome(ObjectNode out, TopicPartition tp, Throwable t) {
        if (t == null) {
            out.putNull(tp.toString());
        } else {
            Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
            out.put(tp.toString(), cause.getClass().getSimpleName() + ": " + cause.getMessage());
        }
    }

    /** req.type: preferred|unclean; req.partitions: [[topic, partition]] or null for all. */
    private JsonNode electLeaders(JsonNode req) throws Exception {
        Set<TopicPartition> partitions = null;
        if (req.path("partitions").isArray()) {
            partitions = new java.util.LinkedHashSet<>();
            for (JsonNode tp : req.path("partitions")) partitions.add(topicPartition(tp));
        }
        org.apache.kafka.common.ElectionType type = "unclean".equals(req.path("type").asText())
            ? org.apache.kafka.common.ElectionType.UNCLEAN
            : org.apache.kafka.common.ElectionType.PREFERRED;
        Map<TopicPartition, java.util.Optional<Throwable>> result = admin().electLeaders(type, partitions).partitions().get();
        ObjectNode out = JSON.createObjectNode();
        result.entrySet().stream()
            .sorted(Comparator.comparing(e -> e.getKey().toString()))
            .forEach(e -> putOutcome(out, e.getKey(), e.getValue().orElse(null)));
        return out;
    }

    /** req.moves: [[topic, partition, [replicas] or null to cancel]]. */
    private JsonNode alterPartitionReassignments(JsonNode req) throws Exception {
        Map<TopicPartition, java.util.Optional<NewPartitionReassignment>> moves = new LinkedHashMap<>();
        for (JsonNode m : req.path("moves")) {
            java.util.Optional<NewPartitionReassignment> target = java.util.Optional.empty();
            if (m.get(2).isArray()) {
                List<Integer> replicas = new ArrayList<>();
                for (JsonNode r : m.get(2)) replicas.add(r.asInt());
                target = java.util.Optional.of(new NewPartitionReassignment(replicas));
            }
            moves.put(topicPartition(m), target);
        }
        ObjectNode out = JSON.createObjectNode();
        for (Map.Entry<TopicPartition, org.apache.kafka.common.KafkaFuture<Void>> e :
                admin().alterPartitionReassignments(moves).values().entrySet()) {
            Throwable t = null;
            try {
                e.getValue().get();
            } catch (ExecutionException x) {
                t = x;
            }
            putOutcome(out, e.getKey(), t);
        }
        return out;
    }

    private JsonNode listPartitionReassignments() throws Exception {
        Map<TopicPartition, PartitionReassignment> all = admin().listPartitionReassignments().reassignments().get();
        ObjectNode out = JSON.createObjectNode();
        all.forEach((tp, r) -> out.put(tp.toString(), r.toString()));
        return out;
    }
}
