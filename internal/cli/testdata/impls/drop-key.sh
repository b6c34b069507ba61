# The reference, leaving every step's "replayed" flag out of its results:
# decoded into structs, the missing key would read as false and pass.
exec "$POLYLOOP_REF" serve-reference | sed -u 's/,"replayed":false//g'
