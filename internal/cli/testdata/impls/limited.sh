# The reference, claiming only json-actions and events: scenarios needing
# more must be skipped, not failed.
exec "$POLYLOOP_REF" serve-reference | sed -u 's/"capabilities":\[[^]]*\]/"capabilities":["json-actions","events"]/'
