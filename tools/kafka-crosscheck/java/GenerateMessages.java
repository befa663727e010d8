/*
 * Runs Kafka's message generator (org.apache.kafka.message.MessageGenerator.processDirectories)
 * without its command-line front end, which needs argparse4j.
 *
 * Usage: GenerateMessages <package> <outputDir> <inputDir> <typeClassGenerators|-> <messageClassGenerator>...
 * where <typeClassGenerators> is a comma-separated list (e.g. ApiMessageTypeGenerator) or "-" for none.
 */
package topograph.crosscheck;

import java.util.Arrays;
import java.util.List;

import org.apache.kafka.message.MessageGenerator;

public final class GenerateMessages {
    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: GenerateMessages <package> <outputDir> <inputDir> "
                + "<typeClassGenerators|-> <messageClassGenerator>...");
            System.exit(2);
        }
        List<String> typeClassGenerators = args[3].equals("-") ? List.of() : Arrays.asList(args[3].split(","));
        List<String> generators = Arrays.asList(args).subList(4, args.length);
        MessageGenerator.processDirectories(args[0], args[1], args[2], typeClassGenerators, generators);
    }
}
