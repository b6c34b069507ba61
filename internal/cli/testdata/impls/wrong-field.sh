# The reference, with one field of every result changed on the way out.
exec "$POLYLOOP_REF" serve-reference | sed -u 's/"reason":"goal_reached_by_tool"/"reason":"goal_reached_by_environment"/g'
