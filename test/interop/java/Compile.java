/*
 * Compiles the interop test programs once, so that each test starts a JVM on class files instead of
 * compiling its source in memory again (Java's source launcher does that on every start).
 *
 * Run through Java's source launcher with kafka-java's lib/* on the class path:
 *
 *   kafka-run-class Compile.java OUT_DIR SOURCE.java...
 *
 * The class path of the compilation is this JVM's own (java.class.path). Exit status 0 when every
 * source compiled; the compiler's diagnostics go to stderr.
 */
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public final class Compile {
    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: Compile OUT_DIR SOURCE.java...");
            System.exit(2);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            System.err.println("no Java compiler in this runtime (module jdk.compiler)");
            System.exit(2);
        }
        new File(args[0]).mkdirs();
        List<String> options = new ArrayList<>(List.of(
            "-d", args[0], "-cp", System.getProperty("java.class.path"), "-encoding", "UTF-8", "-nowarn"));
        for (int i = 1; i < args.length; i++) {
            options.add(args[i]);
        }
        int status = javac.run(null, System.out, System.err, options.toArray(new String[0]));
        System.exit(status);
    }
}
