/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package org.apache.commons.net.util;

public class SubnetUtils6 {
    public SubnetUtils6(String cidrNotation) {
        throw new UnsupportedOperationException("commons-net stand-in: CIDR matching is not available");
    }

    public SubnetInfo getInfo() {
        throw new UnsupportedOperationException("commons-net stand-in");
    }

    public final class SubnetInfo {
        private SubnetInfo() {}

        public boolean isInRange(String address) {
            throw new UnsupportedOperationException("commons-net stand-in");
        }
    }
}
