/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package org.xerial.snappy;

import java.io.InputStream;

public class SnappyInputStream extends InputStream {
    public SnappyInputStream(InputStream in) {
        throw new UnsupportedOperationException("snappy-java stand-in: Snappy compression is not available");
    }

    @Override
    public int read() {
        throw new UnsupportedOperationException("snappy-java stand-in");
    }
}
