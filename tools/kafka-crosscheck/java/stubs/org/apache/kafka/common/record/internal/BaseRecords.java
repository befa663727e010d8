/*
 * Compile-time stand-in for Kafka's record batch type, used by the cross-check build instead of the
 * real class, which pulls in the whole record layer (compression codecs, KRaft control records).
 * The cross-checked schemas have no "records" field, so no generated code path reaches it; the
 * driver refuses to run if a schema gains one.
 */
package org.apache.kafka.common.record.internal;

public interface BaseRecords {
    int sizeInBytes();
}
