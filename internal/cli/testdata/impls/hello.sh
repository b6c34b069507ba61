# Sourced by the broken implementations: answer the runner's hello.
read -r _hello
echo '{"type":"hello","protocol":1,"name":"broken-impl","version":"0","spec_version":"test","capabilities":["json-actions","code-actions","resume","cancellation","context-assembly","events","project-executor"]}'
