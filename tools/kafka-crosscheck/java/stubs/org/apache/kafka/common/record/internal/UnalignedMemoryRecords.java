/*
 * Compile-time stand-in (see BaseRecords): only the members the protocol layer names.
 */
package org.apache.kafka.common.record.internal;

import java.nio.ByteBuffer;

public final class UnalignedMemoryRecords implements BaseRecords {
    private UnalignedMemoryRecords() {
    }

    public ByteBuffer buffer() {
        throw new UnsupportedOperationException("records fields are not part of the cross-check");
    }

    @Override
    public int sizeInBytes() {
        throw new UnsupportedOperationException("records fields are not part of the cross-check");
    }
}
