/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (client telemetry is off:
 * enable.metrics.push defaults to false for the admin client).
 */
package io.opentelemetry.proto.common.v1;

public final class AnyValue {
    private AnyValue() {}

    public static Builder newBuilder() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public String getStringValue() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public static final class Builder {
        private Builder() {}

        public Builder setStringValue(String value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public AnyValue build() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }
    }
}
