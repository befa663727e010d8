/*
 * Runs Kafka's own Admin client (built from a Kafka source tree by tools/kafka-interop/build.ts)
 * against a broker and answers in JSON, one line per request line read from stdin:
 *
 *   {"op":"listGroups","types":["STREAMS"],"states":["Stable"]}
 *   {"op":"describeStreamsGroups","groups":["g"],"includeTopologyDescription":true,"includeAuthorizedOperations":false}
 *   {"op":"deleteStreamsGroups","groups":["g"]}
 *   {"op":"listStreamsGroupOffsets","group":"g","partitions":[["t",0]]}      (partitions optional)
 *   {"op":"alterStreamsGroupOffsets","group":"g","offsets":[["t",0,5]]}
 *   {"op":"deleteStreamsGroupOffsets","group":"g","partitions":[["t",0]]}
 *   {"op":"listOffsets","spec":"earliest|latest","partitions":[["t",0]]}
 *   {"op":"describeCluster"}
 *
 * Answers: {"ok":true,"result":...} or {"ok":false,"error":{"class":...,"message":...}}; calls with
 * per-key futures answer per key (keys sorted). Values are put in a canonical form (sets and lists
 * whose order carries no meaning sorted) so that the driver can compare them with Topograph's own
 * admin client.
 *
 * Usage: AdminHarness <bootstrap-servers>
 */
package topograph.interop;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeStreamsGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.admin.StreamsGroupTopologyDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

public final class AdminHarness {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kafka-interop-admin");
        try (Admin admin = Admin.create(props)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) continue;
                Map<String, Object> answer;
                try {
                    answer = ok(handle(admin, JSON.readTree(line)));
                } catch (Throwable t) {
                    answer = failure(t);
                }
                System.out.println(JSON.writeValueAsString(answer));
                System.out.flush();
            }
        }
    }

    private static Object handle(Admin admin, JsonNode req) throws Exception {
        String op = req.path("op").asText();
        switch (op) {
            case "listGroups": {
                ListGroupsOptions options = new ListGroupsOptions();
                if (req.has("types")) {
                    Set<GroupType> types = new HashSet<>();
                    for (JsonNode t : req.get("types")) types.add(GroupType.parse(t.asText()));
                    options = options.withTypes(types);
                }
                if (req.has("states")) {
                    Set<GroupState> states = new HashSet<>();
                    for (JsonNode s : req.get("states")) states.add(GroupState.parse(s.asText()));
                    options = options.inGroupStates(states);
                }
                List<Map<String, Object>> out = new ArrayList<>();
                for (GroupListing g : admin.listGroups(options).all().get()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("groupId", g.groupId());
                    m.put("type", g.type().map(Object::toString).orElse(null));
                    m.put("protocol", g.protocol());
                    m.put("state", g.groupState().map(Object::toString).orElse(null));
                    out.add(m);
                }
                out.sort(Comparator.comparing(m -> (String) m.get("groupId")));
                return out;
            }
            case "describeStreamsGroups": {
                DescribeStreamsGroupsOptions options = new DescribeStreamsGroupsOptions()
                    .includeTopologyDescription(req.path("includeTopologyDescription").asBoolean(false))
                    .includeAuthorizedOperations(req.path("includeAuthorizedOperations").asBoolean(false));
                Map<String, KafkaFuture<StreamsGroupDescription>> byGroup =
                    admin.describeStreamsGroups(strings(req.get("groups")), options).describedGroups();
                Map<String, Object> out = new TreeMap<>();
                for (Map.Entry<String, KafkaFuture<StreamsGroupDescription>> e : byGroup.entrySet()) {
                    try {
                        out.put(e.getKey(), ok(describe(e.getValue().get())));
                    } catch (Throwable t) {
                        out.put(e.getKey(), failure(t));
                    }
                }
                return out;
            }
            case "deleteStreamsGroups": {
                Map<String, KafkaFuture<Void>> byGroup = admin.deleteStreamsGroups(strings(req.get("groups"))).deletedGroups();
                Map<String, Object> out = new TreeMap<>();
                for (Map.Entry<String, KafkaFuture<Void>> e : byGroup.entrySet()) {
                    try {
                        e.getValue().get();
                        out.put(e.getKey(), ok(null));
                    } catch (Throwable t) {
                        out.put(e.getKey(), failure(t));
                    }
                }
                return out;
            }
            case "listStreamsGroupOffsets": {
                String group = req.get("group").asText();
                ListStreamsGroupOffsetsSpec spec = new ListStreamsGroupOffsetsSpec();
                if (req.has("partitions")) spec = spec.topicPartitions(partitions(req.get("partitions")));
                Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listStreamsGroupOffsets(Map.of(group, spec)).partitionsToOffsetAndMetadata(group).get();
                List<Map<String, Object>> out = new ArrayList<>();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("topic", e.getKey().topic());
                    m.put("partition", e.getKey().partition());
                    OffsetAndMetadata v = e.getValue();
                    m.put("offset", v == null ? null : v.offset());
                    m.put("leaderEpoch", v == null ? null : v.leaderEpoch().orElse(null));
                    m.put("metadata", v == null ? null : v.metadata());
                    out.add(m);
                }
                out.sort(Comparator.comparing((Map<String, Object> m) -> (String) m.get("topic"))
                    .thenComparing(m -> (Integer) m.get("partition")));
                return out;
            }
            case "alterStreamsGroupOffsets": {
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                for (JsonNode o : req.get("offsets"))
                    offsets.put(new TopicPartition(o.get(0).asText(), o.get(1).asInt()), new OffsetAndMetadata(o.get(2).asLong()));
                admin.alterStreamsGroupOffsets(req.get("group").asText(), offsets).all().get();
                return null;
            }
            case "deleteStreamsGroupOffsets": {
                admin.deleteStreamsGroupOffsets(req.get("group").asText(), new HashSet<>(partitions(req.get("partitions")))).all().get();
                return null;
            }
            case "listOffsets": {
                OffsetSpec spec = "earliest".equals(req.path("spec").asText()) ? OffsetSpec.earliest() : OffsetSpec.latest();
                Map<TopicPartition, OffsetSpec> query = new LinkedHashMap<>();
                for (TopicPartition tp : partitions(req.get("partitions"))) query.put(tp, spec);
                Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> result = admin.listOffsets(query).all().get();
                Map<String, Object> out = new TreeMap<>();
                for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e : result.entrySet())
                    out.put(e.getKey().toString(), e.getValue().offset());
                return out;
            }
            case "describeCluster": {
                DescribeClusterResult r = admin.describeCluster();
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("clusterId", r.clusterId().get());
                out.put("controller", node(r.controller().get()));
                out.put("nodes", r.nodes().get().stream().map(AdminHarness::node).sorted().collect(Collectors.toList()));
                return out;
            }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : array) out.add(n.asText());
        return out;
    }

    private static List<TopicPartition> partitions(JsonNode array) {
        List<TopicPartition> out = new ArrayList<>();
        for (JsonNode p : array) out.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt()));
        return out;
    }

    private static String node(Node n) {
        return n == null ? null : n.host() + ":" + n.port() + " (" + n.idString() + ")";
    }

    private static Map<String, Object> describe(StreamsGroupDescription d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("groupId", d.groupId());
        m.put("state", d.groupState().toString());
        m.put("groupEpoch", d.groupEpoch());
        m.put("targetAssignmentEpoch", d.targetAssignmentEpoch());
        m.put("topologyEpoch", d.topologyEpoch());
        m.put("assignorName", d.assignorName().orElse(null));
        m.put("coordinator", node(d.coordinator()));
        m.put("authorizedOperations", d.authorizedOperations() == null ? null
            : d.authorizedOperations().stream().map(Object::toString).sorted().collect(Collectors.toList()));
        List<Map<String, Object>> members = new ArrayList<>();
        for (StreamsGroupMemberDescription mem : d.members()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("memberId", mem.memberId());
            x.put("memberEpoch", mem.memberEpoch());
            x.put("instanceId", mem.instanceId().orElse(null));
            x.put("rackId", mem.rackId().orElse(null));
            x.put("clientId", mem.clientId());
            x.put("clientHost", mem.clientHost());
            x.put("topologyEpoch", mem.topologyEpoch());
            x.put("processId", mem.processId());
            x.put("userEndpoint", mem.userEndpoint().map(e -> e.host() + ":" + e.port()).orElse(null));
            x.put("clientTags", new TreeMap<>(mem.clientTags()));
            x.put("assignment", assignment(mem.assignment()));
            x.put("targetAssignment", assignment(mem.targetAssignment()));
            x.put("isClassic", mem.isClassic());
            members.add(x);
        }
        members.sort(Comparator.comparing(x -> (String) x.get("memberId")));
        m.put("members", members);
        List<Map<String, Object>> subtopologies = new ArrayList<>();
        for (StreamsGroupSubtopologyDescription s : d.subtopologies()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("subtopologyId", s.subtopologyId());
            x.put("sourceTopics", new ArrayList<>(new TreeSet<>(s.sourceTopics())));
            x.put("repartitionSinkTopics", new ArrayList<>(new TreeSet<>(s.repartitionSinkTopics())));
            x.put("stateChangelogTopics", topicInfos(s.stateChangelogTopics()));
            x.put("repartitionSourceTopics", topicInfos(s.repartitionSourceTopics()));
            subtopologies.add(x);
        }
        subtopologies.sort(Comparator.comparing(x -> (String) x.get("subtopologyId")));
        m.put("subtopologies", subtopologies);
        m.put("topologyDescriptionStatus", d.topologyDescriptionStatus().toString());
        m.put("topologyDescription", d.topologyDescription().map(AdminHarness::topology).orElse(null));
        return m;
    }

    private static Map<String, Object> topicInfos(Map<String, StreamsGroupSubtopologyDescription.TopicInfo> infos) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, StreamsGroupSubtopologyDescription.TopicInfo> e : infos.entrySet()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("partitions", e.getValue().partitions());
            x.put("replicationFactor", e.getValue().replicationFactor());
            x.put("topicConfigs", new TreeMap<>(e.getValue().topicConfigs()));
            out.put(e.getKey(), x);
        }
        return out;
    }

    private static String tasks(List<StreamsGroupMemberAssignment.TaskIds> tasks) {
        return tasks.stream()
            .map(t -> t.subtopologyId() + ":" + new TreeSet<>(t.partitions()))
            .sorted()
            .collect(Collectors.joining(" "));
    }

    private static Map<String, Object> assignment(StreamsGroupMemberAssignment a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("active", tasks(a.activeTasks()));
        m.put("standby", tasks(a.standbyTasks()));
        m.put("warmup", tasks(a.warmupTasks()));
        return m;
    }

    private static Map<String, Object> topologyNode(StreamsGroupTopologyDescription.Node n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", n.name());
        if (n instanceof StreamsGroupTopologyDescription.Source) {
            m.put("type", "source");
            m.put("topics", new ArrayList<>(new TreeSet<>(((StreamsGroupTopologyDescription.Source) n).topics())));
        } else if (n instanceof StreamsGroupTopologyDescription.Processor) {
            m.put("type", "processor");
            m.put("stores", new ArrayList<>(new TreeSet<>(((StreamsGroupTopologyDescription.Processor) n).stores())));
        } else if (n instanceof StreamsGroupTopologyDescription.Sink) {
            m.put("type", "sink");
            m.put("topic", ((StreamsGroupTopologyDescription.Sink) n).topic().orElse(null));
        } else {
            m.put("type", n.getClass().getName());
        }
        m.put("successors", new ArrayList<>(new TreeSet<>(n.successors())));
        m.put("predecessors", new ArrayList<>(new TreeSet<>(n.predecessors())));
        return m;
    }

    private static Map<String, Object> topology(StreamsGroupTopologyDescription t) {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Map<String, Object>> subtopologies = new ArrayList<>();
        for (StreamsGroupTopologyDescription.Subtopology s : t.subtopologies()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("id", s.id());
            List<Map<String, Object>> nodes = s.nodes().stream().map(AdminHarness::topologyNode).collect(Collectors.toList());
            nodes.sort(Comparator.comparing(n -> (String) n.get("name")));
            x.put("nodes", nodes);
            subtopologies.add(x);
        }
        subtopologies.sort(Comparator.comparing(x -> (String) x.get("id")));
        m.put("subtopologies", subtopologies);
        List<Map<String, Object>> globalStores = new ArrayList<>();
        for (StreamsGroupTopologyDescription.GlobalStore g : t.globalStores()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("source", topologyNode(g.source()));
            x.put("processor", topologyNode(g.processor()));
            globalStores.add(x);
        }
        globalStores.sort(Comparator.comparing(x -> (String) ((Map<?, ?>) x.get("source")).get("name")));
        m.put("globalStores", globalStores);
        return m;
    }

    private static Map<String, Object> ok(Object result) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.put("result", result);
        return m;
    }

    private static Map<String, Object> failure(Throwable t) {
        Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("class", cause.getClass().getName());
        e.put("message", cause.getMessage());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", e);
        return m;
    }
}
