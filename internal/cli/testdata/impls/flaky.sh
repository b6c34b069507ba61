# The reference, wrong in every third process it starts (counted in the
# file $FLAKY_COUNTER): one green run proves nothing about it.
n=$(cat "$FLAKY_COUNTER" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$FLAKY_COUNTER"
if [ $((n % 3)) -eq 0 ]; then
  exec "$POLYLOOP_REF" serve-reference --mutant context-size-off-by-one
fi
exec "$POLYLOOP_REF" serve-reference
