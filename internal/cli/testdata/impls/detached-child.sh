# The reference, with a detached child (its own session, so no process
# group kill reaches it) that holds the implementation's stdout and
# stderr open long after the run. The runner must not wait for it.
setsid sleep 3000.77 &
exec "$POLYLOOP_REF" serve-reference
