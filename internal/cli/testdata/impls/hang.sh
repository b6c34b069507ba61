# Accepts the run request, then never answers (a child process holds stdout open too).
. "$(dirname "$0")/hello.sh"
read -r _run
sleep 1000.4242 &
wait
