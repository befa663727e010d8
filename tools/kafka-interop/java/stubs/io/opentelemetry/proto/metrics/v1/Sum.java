/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (client telemetry is off:
 * enable.metrics.push defaults to false for the admin client).
 */
package io.opentelemetry.proto.metrics.v1;

public final class Sum {
    private Sum() {}

    public boolean getIsMonotonic() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public AggregationTemporality getAggregationTemporality() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public int getDataPointsCount() {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public NumberDataPoint getDataPoints(int index) {
        throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
    }

    public static final class Builder {
        private Builder() {}

        public Builder setIsMonotonic(boolean value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder setAggregationTemporality(AggregationTemporality value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder addDataPoints(NumberDataPoint value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Builder addDataPoints(NumberDataPoint.Builder value) {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }

        public Sum build() {
            throw new UnsupportedOperationException("opentelemetry-proto stand-in: client telemetry is not available");
        }
    }
}
