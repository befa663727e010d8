/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.lz4;

public abstract class LZ4Compressor {
    public final int maxCompressedLength(int length) {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }

    public final int compress(byte[] src, int srcOff, int srcLen, byte[] dest, int destOff) {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }

    public abstract int compress(byte[] src, int srcOff, int srcLen, byte[] dest, int destOff, int maxDestLen);
}
