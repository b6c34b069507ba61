# Asks for one model output, then exits without a result.
. "$(dirname "$0")/hello.sh"
read -r _run
echo '{"type":"model_call","call":1,"phase":0,"input":[{"role":"user","content":"hi"}]}'
read -r _answer
exit 0
