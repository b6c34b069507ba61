# The reference with one deviation: on resume it runs an unfinished NEVER
# action again (0002.D4), as a port that treats every tool as SAFE would.
exec "$POLYLOOP_REF" serve-reference --mutant never-replayed
