/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (client telemetry is off:
 * enable.metrics.push defaults to false for the admin client).
 */
package io.opentelemetry.proto.metrics.v1;

import java.io.IOException;
import java.io.OutputStream;

public final class MetricsData {
    private MetricsData() {}

    public static Builder newBuilder() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public byte[] toByteArray() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public void writeTo(OutputStream output) throws IOException {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public static final class Builder {
        private Builder() {}

        public Builder addResourceMetrics(ResourceMetrics value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public MetricsData build() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }
    }
}
