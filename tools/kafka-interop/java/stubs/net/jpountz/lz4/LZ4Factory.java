/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package net.jpountz.lz4;

public final class LZ4Factory {
    private LZ4Factory() {}

    public static LZ4Factory fastestInstance() {
        throw new UnsupportedOperationException("lz4-java stand-in: LZ4 compression is not available");
    }

    public LZ4Compressor fastCompressor() {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }

    public LZ4Compressor highCompressor(int compressionLevel) {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }

    public LZ4SafeDecompressor safeDecompressor() {
        throw new UnsupportedOperationException("lz4-java stand-in");
    }
}
