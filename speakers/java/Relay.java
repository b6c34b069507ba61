// Relay is a protocol speaker on the JVM: it starts a kernel (normally
// `polyloop-conform serve-reference`) as its own child and relays the
// protocol's JSON lines both ways, so that what the runner exercises is the
// JVM's start, its stdout, its signals and its files (speakers/README.md).
//
// The child is the command on Relay's own command line, run as given, or,
// with no arguments, $POLYLOOP_SPEAKER_CHILD run through /bin/sh -c.
//
// Process rules it keeps (docs/protocol.md, "Transport"):
//   - stdout carries the child's lines and nothing else; every diagnostic
//     goes to stderr, which the child shares.
//   - SIGTERM and SIGINT are forwarded to the child, and the relay exits
//     when the child does, with its exit status.
//   - when the relay's stdin ends, the child's stdin is closed, which ends
//     the child; when the relay is killed, the child's stdin ends the same
//     way (the relay held its only write end), so no child outlives it.
//
// Build: none (`java Relay.java ARGS` runs the source), or `javac -d DIR
// Relay.java` and `java -cp DIR Relay ARGS`.
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;

public final class Relay {
    private Relay() {}

    public static void main(String[] args) throws InterruptedException {
        List<String> command = childCommand(args);
        if (command == null) {
            System.err.println("relay: no child to start: give its command line as arguments, or set POLYLOOP_SPEAKER_CHILD");
            System.exit(2);
        }
        Process child;
        try {
            child = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
        } catch (IOException e) {
            System.err.println("relay: start " + command + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        forward("TERM", child);
        forward("INT", child);

        Thread in = pump("stdin", System.in, child.getOutputStream());
        in.setDaemon(true); // a read of our stdin must not keep the JVM alive
        in.start();
        Thread out = pump("stdout", child.getInputStream(), new FileOutputStream(FileDescriptor.out));
        out.start();

        int status = child.waitFor();
        out.join(); // every line the child wrote reaches our stdout first
        System.exit(status);
    }

    // childCommand is the child's argv: the arguments, or the variable's
    // command line through the shell; null when neither is given.
    static List<String> childCommand(String[] args) {
        if (args.length > 0) {
            return Arrays.asList(args);
        }
        String line = System.getenv("POLYLOOP_SPEAKER_CHILD");
        if (line == null || line.isEmpty()) {
            return null;
        }
        return List.of("/bin/sh", "-c", line);
    }

    // pump copies from to to as the bytes come, one write per read, so a
    // line is never held back waiting for the next; at the end of from it
    // closes to (our stdin's end is the child's stdin's end).
    static Thread pump(String name, InputStream from, OutputStream to) {
        return new Thread(() -> {
            byte[] buf = new byte[1 << 16];
            try {
                for (int n; (n = from.read(buf)) >= 0; ) {
                    to.write(buf, 0, n);
                    to.flush();
                }
            } catch (IOException e) {
                // The other side is gone (the child exited, or the runner
                // closed our stdout): nothing is left to relay.
            } finally {
                try {
                    to.close();
                } catch (IOException e) {
                    // already closed
                }
            }
        }, "relay-" + name);
    }

    // forward makes signal sig reach the child instead of stopping the JVM:
    // the relay goes on relaying until the child exits. Installing a
    // handler also matters when the relay is PID 1 of a PID namespace,
    // where a signal without one is dropped.
    @SuppressWarnings("removal")
    static void forward(String sig, Process child) {
        sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> signal(child, sig));
    }

    // signal sends sig to the child. The JDK can send only SIGTERM
    // (destroy) and SIGKILL; any other signal goes through the shell's
    // kill, which every POSIX system has. SIGTERM goes through the child's
    // ProcessHandle, not Process.destroy(), which also closes the pipes to
    // the child: its stdin would end as the signal arrives (a kernel may
    // then exit 0, as at the end of its input, instead of by the signal)
    // and its last lines would never reach our stdout.
    static void signal(Process child, String sig) {
        if (sig.equals("TERM")) {
            child.toHandle().destroy();
            return;
        }
        try {
            new ProcessBuilder("/bin/sh", "-c", "kill -s " + sig + " " + child.pid())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
        } catch (IOException e) {
            System.err.println("relay: forward SIG" + sig + ": " + e.getMessage());
        }
    }
}
