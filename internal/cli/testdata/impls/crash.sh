# Exits as soon as a scenario starts.
. "$(dirname "$0")/hello.sh"
read -r _run
echo "impl: segmentation fault (simulated)" >&2
exit 3
