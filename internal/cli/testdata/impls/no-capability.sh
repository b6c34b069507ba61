# An implementation that shakes hands claiming no capability and then
# reads and ignores everything: every scenario would be skipped.
read -r _hello
echo '{"type":"hello","protocol":1,"name":"claims-nothing","version":"0","spec_version":"test","capabilities":[]}'
cat >/dev/null
