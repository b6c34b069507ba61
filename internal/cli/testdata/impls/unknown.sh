# Answers with a message type the protocol does not have.
. "$(dirname "$0")/hello.sh"
read -r _run
echo '{"type":"banana","call":1}'
sleep 1000.4244
