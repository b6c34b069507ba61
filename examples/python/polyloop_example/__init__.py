"""A small PolyLoop kernel in Python, written from polyloop-conform's design
records (docs/design) as the first independent implementation the suite is
run against. Where the records leave a choice to the implementation, the
wording above all, it makes its own."""
