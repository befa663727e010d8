/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.util;

public final class SafeUtils {
    private SafeUtils() {}

    public static void checkRange(byte[] buf, int off, int len) {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }
}
