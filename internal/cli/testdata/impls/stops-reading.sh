# An implementation that answers the hello, then never reads its stdin
# again while it keeps asking the model: the runner's answers fill the
# pipe and its writes block. --timeout must still end the scenario.
. "$(dirname "$0")/hello.sh"
i=1
while :; do
  echo '{"type":"model_call","call":'$i',"phase":0,"input":[]}'
  i=$((i+1))
done
