/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (client telemetry is off:
 * enable.metrics.push defaults to false for the admin client).
 */
package io.opentelemetry.proto.metrics.v1;

import io.opentelemetry.proto.common.v1.KeyValue;

import java.util.List;

public final class NumberDataPoint {
    private NumberDataPoint() {}

    public static Builder newBuilder() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public int getAttributesCount() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public List<KeyValue> getAttributesList() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public long getTimeUnixNano() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public long getStartTimeUnixNano() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public double getAsDouble() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public long getAsInt() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public static final class Builder {
        private Builder() {}

        public Builder setTimeUnixNano(long value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder setStartTimeUnixNano(long value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder setAsInt(long value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder setAsDouble(double value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder addAllAttributes(Iterable<? extends KeyValue> values) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public NumberDataPoint build() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }
    }
}
