/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.xxhash;

import java.nio.ByteBuffer;

public abstract class XXHash32 {
    public abstract int hash(byte[] buf, int off, int len, int seed);

    public abstract int hash(ByteBuffer buf, int off, int len, int seed);
}
