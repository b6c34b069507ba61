# The reference with one cross-cutting mistake: every context size is one
# more than the measure gives, as a port that counts a separator would
# (0010.D5). Nearly every scenario fails, all for one cause.
exec "$POLYLOOP_REF" serve-reference --mutant context-size-off-by-one
