/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.lz4;

import java.nio.ByteBuffer;

public abstract class LZ4SafeDecompressor {
    public abstract int decompress(ByteBuffer src, int srcOff, int srcLen, ByteBuffer dest, int destOff, int maxDestLen);
}
