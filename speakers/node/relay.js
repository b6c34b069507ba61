// relay.js is a protocol speaker on Node.js: it starts a kernel (normally
// `polyloop-conform serve-reference`) as its own child and relays the
// protocol's JSON lines both ways, so that what the runner exercises is
// Node's start, its stdout, its signals and its files (speakers/README.md).
// Standard library only; run it as `node relay.js ARGS`, no build step.
//
// The child is the command on the relay's own command line, run as given,
// or, with no arguments, $POLYLOOP_SPEAKER_CHILD run through /bin/sh -c.
//
// Process rules it keeps (docs/protocol.md, "Transport"):
//   - stdout carries the child's lines and nothing else; diagnostics go to
//     stderr, which the child shares.
//   - SIGTERM and SIGINT are forwarded to the child, and the relay exits
//     when the child does, with its exit status.
//   - when the relay's stdin ends, the child's stdin is closed, which ends
//     the child; when the relay is killed, the child's stdin ends the same
//     way (the relay held its only write end), so no child outlives it.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');

function childCommand(args) {
  if (args.length > 0) {
    return args;
  }
  const line = process.env.POLYLOOP_SPEAKER_CHILD;
  return line ? ['/bin/sh', '-c', line] : null;
}

// writeAll writes buf to fd synchronously, whole: stdout may be a pipe the
// runner reads slowly, and a short write must not drop the rest of a line.
function writeAll(fd, buf) {
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') {
        throw e;
      }
    }
  }
}

function main() {
  const command = childCommand(process.argv.slice(2));
  if (command === null) {
    process.stderr.write('relay: no child to start: give its command line as arguments, or set POLYLOOP_SPEAKER_CHILD\n');
    process.exit(2);
  }
  const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  child.on('error', (e) => {
    process.stderr.write(`relay: start ${command.join(' ')}: ${e.message}\n`);
    process.exit(2);
  });
  // A listener replaces Node's default (exit at once), so the relay goes on
  // relaying until the child exits; with one installed, a signal also
  // reaches the relay when it is PID 1 of a PID namespace.
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => child.kill(sig));
  }

  // Our stdin to the child's, chunk by chunk as it comes; its end (or a
  // child that stopped reading) closes the child's stdin.
  process.stdin.on('data', (chunk) => {
    if (!child.stdin.destroyed) {
      child.stdin.write(chunk);
    }
  });
  process.stdin.on('end', () => child.stdin.end());
  process.stdin.on('error', () => child.stdin.end());
  child.stdin.on('error', () => {}); // the child exited: nothing to relay

  // The child's stdout to ours, written synchronously so that a line is out
  // before the next is read, and nothing is lost when we exit.
  child.stdout.on('data', (chunk) => {
    try {
      writeAll(1, chunk);
    } catch (e) {
      // The runner closed our stdout: stop the child, it has no reader.
      child.kill('SIGTERM');
    }
  });

  // 'close' comes after the child exited and its stdout ended, so every
  // line it wrote has been relayed.
  child.on('close', (code, signal) => {
    process.exit(code !== null ? code : 128 + (require('node:os').constants.signals[signal] || 0));
  });
}

main();
