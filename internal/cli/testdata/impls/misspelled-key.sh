# The reference, misspelling observation_is_synthetic in its results: an
# unknown key must not be dropped silently.
exec "$POLYLOOP_REF" serve-reference | sed -u 's/"observation_is_synthetic"/"observation_synthetic"/g'
