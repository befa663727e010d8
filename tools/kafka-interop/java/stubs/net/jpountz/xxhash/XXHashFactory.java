/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.xxhash;

public final class XXHashFactory {
    private XXHashFactory() {}

    public static XXHashFactory fastestInstance() {
        throw new UnsupportedOperationException("lz4-java stand-in: XXHash is not available");
    }

    public XXHash32 hash32() {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }
}
