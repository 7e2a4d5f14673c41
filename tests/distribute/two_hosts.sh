#!/usr/bin/env bash
# Runs COMMAND... under mpirun across two "hosts" on this machine: two network namespaces
# joined by a veth pair (10.77.0.1 and 10.77.0.2, made here and deleted at exit), each with its
# own host name (tenfold-host-a, tenfold-host-b), one rank in each. mpirun reaches the second
# host through a launch agent that enters its namespace, where ssh would log in.
#   two_hosts.sh COMMAND...      (as root; exits 77 when namespaces cannot be made)
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "two_hosts.sh: needs root for network namespaces"; exit 77; }
suffix=$$
ns_a=tenfold_a_$suffix ns_b=tenfold_b_$suffix
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns_a" && ip netns add "$ns_b" || { echo "two_hosts.sh: cannot make namespaces"; exit 77; }
ip link add "tfa$suffix" type veth peer name "tfb$suffix"
ip link set "tfa$suffix" netns "$ns_a"
ip link set "tfb$suffix" netns "$ns_b"
ip -n "$ns_a" addr add 10.77.0.1/24 dev "tfa$suffix"
ip -n "$ns_b" addr add 10.77.0.2/24 dev "tfb$suffix"
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "tfa$suffix" up
ip -n "$ns_b" link set "tfb$suffix" up

# The launch agent: called as `agent HOST orted-command...`, like ssh.
cat > "$work/agent" <<AGENT
#!/bin/sh
host=\$1; shift
case \$host in
  10.77.0.1) ns=$ns_a name=tenfold-host-a ;;
  10.77.0.2) ns=$ns_b name=tenfold-host-b ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec \$ns unshare --uts /bin/sh -c "hostname \$name; \$*"
AGENT
chmod +x "$work/agent"

mpirun=(mpirun --allow-run-as-root --host 10.77.0.1,10.77.0.2 -np 2
        --mca plm_rsh_agent "$work/agent" --mca oob_tcp_if_include 10.77.0.0/24
        --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --bind-to none
        -x OMP_NUM_THREADS=1 "$@")
ip netns exec "$ns_a" unshare --uts /bin/sh -c 'hostname tenfold-host-a; exec "$@"' sh "${mpirun[@]}"
