/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it.
 */
package org.xerial.snappy;

import java.io.OutputStream;

public class SnappyOutputStream extends OutputStream {
    public SnappyOutputStream(OutputStream out) {
        throw new UnsupportedOperationException("snappy-java stand-in: Snappy compression is not available");
    }

    @Override
    public void write(int b) {
        throw new UnsupportedOperationException("snappy-java stand-in");
    }
}
