#!/bin/sh
# A launch agent for mpirun (plm_rsh_agent, which tools/launch.py sets from MXPLUG_LAUNCH_AGENT)
# that reaches "hosts" made of Linux network namespaces on this machine, as ssh would reach real
# ones: `netns-agent.sh [OPTIONS] HOST COMMAND...` runs COMMAND in the namespace holding HOST's
# address, with its own host name (HOST), so Open MPI sees two machines. Used by the two-host test
# (tests/python/test_dist.py); needs root, as `ip netns` does.
set -eu
while [ $# -gt 0 ]; do
  case "$1" in
    -*) shift ;;  # ssh's options, which mpirun may pass: nothing to do here
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "netns-agent.sh: expected HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
for ns in $(ip netns list | cut -d' ' -f1); do
  if ip -n "$ns" -o addr show | grep -q " inet $host/"; then
    exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
  fi
done
echo "netns-agent.sh: no network namespace has the address $host (ip netns list: $(ip netns list | tr '\n' ' '))" >&2
exit 255
