# Floods stdout with one endless line.
. "$(dirname "$0")/hello.sh"
read -r _run
head -c 20000000 /dev/zero | tr '\0' 'x'
sleep 1000.4245
