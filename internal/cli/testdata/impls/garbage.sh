# Prints something that is not a protocol message.
. "$(dirname "$0")/hello.sh"
read -r _run
echo "Traceback (most recent call last): oops"
sleep 1000.4243
