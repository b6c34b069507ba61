# Claims a protocol version the runner does not speak.
read -r _hello
echo '{"type":"hello","protocol":99,"name":"future","version":"9","spec_version":"x","capabilities":[]}'
sleep 1000.4246
