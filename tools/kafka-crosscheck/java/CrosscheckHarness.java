/*
 * Line-oriented harness around Kafka's generated message classes, driven by
 * tools/kafka-crosscheck/main.ts. One request per stdin line, one answer per stdout line, in order.
 *
 *   <Name> <version> <hex>         decode the bytes with Kafka's class (every byte must be consumed),
 *                                  re-encode them with Kafka's class
 *   FROMJSON <Name> <version> <j>  build the message with Kafka's JSON converter, encode it
 *   DEFAULT <Name> <version>       encode a message with Kafka's defaults (new XData())
 *   VERSIONS <Name>                Kafka's lowest and highest supported versions
 *   HEADERS <apiKey> <version>     request and response header versions (Kafka's ApiMessageType)
 *   DEFAULTOF <Name> <Struct|-> <f1,f2,..>  the named fields of a new instance of the message class
 *                                  ("-") or of its nested struct class, through their accessors
 *
 * Answers: "OK <hex> <json>" (the message as Kafka's JSON converter writes it, int64 values as
 * strings), "OK <lo> <hi>" for VERSIONS, "OK <request> <response>" for HEADERS, or "ERR <text>". Hex "-" stands for no bytes.
 * <Name> is a schema name: Kafka class org.apache.kafka.common.message.<Name>Data, or
 * org.apache.kafka.coordinator.group.generated.<Name> for coordinator records.
 */
package topograph.crosscheck;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

public final class CrosscheckHarness {
    private static final String[] PACKAGES = {
        "org.apache.kafka.common.message.%sData",
        "org.apache.kafka.coordinator.group.generated.%s",
    };

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** Kafka's classes for one schema name, looked up once. */
    private static final class Api {
        final Class<?> dataClass;
        final Constructor<?> readConstructor;
        final Constructor<?> defaultConstructor;
        final Method jsonRead;
        final Method jsonWrite;
        final short lowest;
        final short highest;

        Api(String name) throws ReflectiveOperationException {
            Class<?> found = null;
            for (String pattern : PACKAGES) {
                try {
                    found = Class.forName(String.format(pattern, name));
                    break;
                } catch (ClassNotFoundException e) {
                    // try the next package
                }
            }
            if (found == null) throw new ClassNotFoundException("no Kafka class for " + name);
            dataClass = found;
            readConstructor = found.getConstructor(Readable.class, short.class);
            defaultConstructor = found.getConstructor();
            Class<?> converter = Class.forName(found.getName() + "JsonConverter");
            jsonRead = converter.getMethod("read", JsonNode.class, short.class);
            jsonWrite = converter.getMethod("write", found, short.class);
            lowest = found.getField("LOWEST_SUPPORTED_VERSION").getShort(null);
            highest = found.getField("HIGHEST_SUPPORTED_VERSION").getShort(null);
        }
    }

    private static final Map<String, Api> APIS = new HashMap<>();

    private static Api api(String name) throws ReflectiveOperationException {
        Api a = APIS.get(name);
        if (a == null) {
            a = new Api(name);
            APIS.put(name, a);
        }
        return a;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        PrintStream out = new PrintStream(
            new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String answer;
            try {
                answer = handle(line);
            } catch (InvocationTargetException e) {
                answer = error(e.getCause());
            } catch (Throwable t) {
                answer = error(t);
            }
            out.print(answer);
            out.print('\n');
            // answer as soon as there is no further request waiting
            if (!in.ready()) out.flush();
        }
        out.flush();
    }

    private static String error(Throwable t) {
        String text = t.getClass().getSimpleName() + ": " + t.getMessage();
        return "ERR " + text.replace('\n', ' ').replace('\r', ' ');
    }

    private static String handle(String line) throws Exception {
        String[] parts = line.split(" ", 4);
        switch (parts[0]) {
            case "VERSIONS": {
                Api a = api(parts[1]);
                return "OK " + a.lowest + " " + a.highest;
            }
            case "HEADERS": {
                ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(parts[1]));
                short version = Short.parseShort(parts[2]);
                return "OK " + type.requestHeaderVersion(version) + " " + type.responseHeaderVersion(version);
            }
            case "DEFAULTOF": {
                Api a = api(parts[1]);
                Class<?> c = parts[2].equals("-") ? a.dataClass : Class.forName(a.dataClass.getName() + "$" + parts[2]);
                Object o = c.getConstructor().newInstance();
                ObjectNode values = MAPPER.createObjectNode();
                for (String field : parts[3].split(",")) values.set(field, plain(c.getMethod(field).invoke(o)));
                return "OK - " + MAPPER.writeValueAsString(values);
            }
            case "DEFAULT": {
                Api a = api(parts[1]);
                short version = Short.parseShort(parts[2]);
                Message m = (Message) a.defaultConstructor.newInstance();
                return ok(a, m, version);
            }
            case "FROMJSON": {
                Api a = api(parts[1]);
                short version = Short.parseShort(parts[2]);
                JsonNode node = MAPPER.readTree(parts[3]);
                Message m = (Message) a.jsonRead.invoke(null, node, version);
                return ok(a, m, version);
            }
            default: {
                if (parts.length != 3) return "ERR expected '<Name> <version> <hex>'";
                Api a = api(parts[0]);
                short version = Short.parseShort(parts[1]);
                ByteBuffer buf = ByteBuffer.wrap(fromHex(parts[2]));
                Message m = (Message) a.readConstructor.newInstance(new ByteBufferAccessor(buf), version);
                if (buf.hasRemaining()) {
                    return "ERR decoding left " + buf.remaining() + " of " + buf.limit() + " bytes unread";
                }
                return ok(a, m, version);
            }
        }
    }

    private static String ok(Api a, Message m, short version) throws Exception {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = m.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        m.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.position() != size) {
            return "ERR size() said " + size + " bytes but write() wrote " + buf.position();
        }
        JsonNode json = (JsonNode) a.jsonWrite.invoke(null, m, version);
        return "OK " + toHex(buf.array()) + " " + MAPPER.writeValueAsString(longsAsText(json));
    }

    /** a field value as JSON: int64 as a string, bytes as base64, uuid as text, a struct as "{struct}" */
    private static JsonNode plain(Object x) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (x == null) return f.nullNode();
        if (x instanceof Long) return f.textNode(x.toString());
        if (x instanceof Byte || x instanceof Short || x instanceof Integer) return f.numberNode(((Number) x).intValue());
        if (x instanceof Double) return f.numberNode((Double) x);
        if (x instanceof Boolean) return f.booleanNode((Boolean) x);
        if (x instanceof String || x instanceof Uuid) return f.textNode(x.toString());
        if (x instanceof byte[]) return f.binaryNode((byte[]) x);
        if (x instanceof ByteBuffer) return f.binaryNode(MessageUtil.byteBufferToArray((ByteBuffer) x));
        if (x instanceof Collection) {
            ArrayNode arr = f.arrayNode();
            for (Object e : (Collection<?>) x) arr.add(plain(e));
            return arr;
        }
        if (x instanceof Message) return f.textNode("{struct}");
        return f.textNode("{" + x.getClass().getName() + "}");
    }

    /** int64 values become strings, so the driver compares them without losing precision. */
    private static JsonNode longsAsText(JsonNode node) {
        if (node.isLong() || node.isBigInteger()) return new TextNode(node.asText());
        if (node instanceof ObjectNode) {
            ObjectNode o = (ObjectNode) node;
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String name : names) o.set(name, longsAsText(o.get(name)));
        } else if (node instanceof ArrayNode) {
            ArrayNode arr = (ArrayNode) node;
            for (int i = 0; i < arr.size(); i++) arr.set(i, longsAsText(arr.get(i)));
        }
        return node;
    }

    private static String toHex(byte[] bytes) {
        if (bytes.length == 0) return "-";
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    private static byte[] fromHex(String hex) {
        if (hex.equals("-")) return new byte[0];
        if (hex.length() % 2 != 0) throw new IllegalArgumentException("odd hex length");
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
