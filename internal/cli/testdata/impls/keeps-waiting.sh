# The reference, never acknowledging a cancelled call: it stops its run but
# says nothing of the call it abandoned, so nothing shows it was released.
exec "$POLYLOOP_REF" serve-reference | sed -u '/"type":"released"/d'
