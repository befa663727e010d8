/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.lz4;

public class LZ4Exception extends RuntimeException {
    public LZ4Exception(String msg) {
        super(msg);
    }
}
