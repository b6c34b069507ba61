# The reference, naming every trajectory after one scenario: the result's
# id is right, its trajectory's scenario field is not.
exec "$POLYLOOP_REF" serve-reference | sed -u 's#"trajectory":{"format":"polyloop.trajectory/v1","scenario":"[^"]*"#"trajectory":{"format":"polyloop.trajectory/v1","scenario":"outcome.normal-return"#'
