/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (client telemetry is off:
 * enable.metrics.push defaults to false for the admin client).
 */
package io.opentelemetry.proto.resource.v1;

import io.opentelemetry.proto.common.v1.KeyValue;

import java.util.List;

public final class Resource {
    private Resource() {}

    public static Builder newBuilder() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public Builder toBuilder() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public List<KeyValue> getAttributesList() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public static final class Builder {
        private Builder() {}

        public Builder addAttributes(KeyValue value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder addAttributes(KeyValue.Builder value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder clearAttributes() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Resource build() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }
    }
}
