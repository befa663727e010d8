/*
 * An SLF4J provider that logs the way Kafka's command-line tools do when started by bin/*.sh:
 * kafka-run-class.sh points log4j2 at config/tools-log4j2.yaml, whose root logger is WARN with the
 * pattern "[%d] %p %m (%c)%n" on stderr. Log4j itself is not needed for that (and is not available
 * offline); this class writes the same lines. The level can be changed with
 * -Dtopograph.interop.log.level=TRACE|DEBUG|INFO|WARN|ERROR|OFF.
 */
package topograph.interop;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

import java.io.PrintStream;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

public final class ToolsLogProvider implements SLF4JServiceProvider {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss,SSS");
    private static final int THRESHOLD = threshold();

    private final ILoggerFactory loggerFactory = new Factory();
    private final IMarkerFactory markerFactory = new BasicMarkerFactory();
    private final MDCAdapter mdcAdapter = new NOPMDCAdapter();

    private static int threshold() {
        String level = System.getProperty("topograph.interop.log.level", "WARN").toUpperCase(Locale.ROOT);
        if (level.equals("OFF")) return Integer.MAX_VALUE;
        return Level.valueOf(level).toInt();
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggerFactory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markerFactory;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdcAdapter;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
    }

    private static final class Factory implements ILoggerFactory {
        private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();

        @Override
        public Logger getLogger(String name) {
            return loggers.computeIfAbsent(name, PatternLogger::new);
        }
    }

    private static final class PatternLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;

        PatternLogger(String name) {
            this.name = name;
        }

        private static boolean enabled(Level level) {
            return level.toInt() >= THRESHOLD;
        }

        @Override
        public boolean isTraceEnabled() {
            return enabled(Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return enabled(Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return enabled(Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return enabled(Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return enabled(Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String messagePattern,
                                                   Object[] arguments, Throwable throwable) {
            String message = MessageFormatter.basicArrayFormat(messagePattern, arguments);
            PrintStream err = System.err;
            synchronized (err) {
                err.print("[" + TIME.format(LocalDateTime.now()) + "] " + level + " " + message + " (" + name + ")"
                    + System.lineSeparator());
                if (throwable != null) throwable.printStackTrace(err);
                err.flush();
            }
        }
    }
}
