/*
 * Compile-time stand-in for a third-party class that is not available offline (see
 * tools/kafka-interop/build.ts, STAND_INS). It only lets Kafka's sources compile: every member throws,
 * and the commands tools/kafka-interop runs never reach it (CSV is only used by --reset-offsets
 * --export and --from-file).
 */
package com.fasterxml.jackson.dataformat.csv;

import com.fasterxml.jackson.core.FormatSchema;

public class CsvSchema implements FormatSchema {
    private CsvSchema() {}

    public CsvSchema sortedBy(String... columnNames) {
        throw new UnsupportedOperationException("jackson-dataformat-csv stand-in: CSV is not available");
    }

    @Override
    public String getSchemaType() {
        throw new UnsupportedOperationException("jackson-dataformat-csv stand-in: CSV is not available");
    }
}
