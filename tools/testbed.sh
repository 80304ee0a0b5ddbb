#!/usr/bin/env bash
# A network file system on this one machine, for pario's tests and benchmarks.
#
#   tools/testbed.sh up [--nodes K] [--cache off|nfslike] [--delay-us D] [--mnt PATH]
#                       [--mpi-net shm|tcp]
#   tools/testbed.sh status [--env]
#   tools/testbed.sh down
#   tools/testbed.sh node [--mnt PATH] --ranks-per-node R -- PROGRAM [ARGS...]
#   tools/testbed.sh agent HOST COMMAND   (mpiexec's launch agent with --mpi-net tcp)
#
# The server is GlusterFS (Debian's glusterfs-server): glusterd and one brick
# daemon per brick (plain directories) run in a network namespace of their own,
# joined to this one by a veth pair, so every request a client does not answer
# from its cache is a TCP round trip. The clients are FUSE mounts (glusterfs) in
# this namespace, one per simulated node, each with its own client process and
# page cache:
#
#   PATH-node0 .. PATH-node<K-1>   node k's mount
#   PATH                           node 0's mount again (a bind mount): what
#                                  the launcher and one-process tools see
#
# `node` is the per-rank wrapper: rank r belongs to node k = r / R; it enters a
# private mount namespace, binds PATH-node<k> over PATH and runs the program,
# so every rank sees the same path served by its own node's client. It also
# gets a host-name namespace with the host name pario-tb-node<k>, so MPI-IO
# implementations that tell nodes apart by MPI_Get_processor_name (ROMIO) see
# K nodes. With --mpi-net shm (the default) MPI itself still sees one node
# (shared memory between all ranks); with --mpi-net tcp every simulated node
# also has a network namespace of its own, and mpiexec starts one daemon per
# node in it (`agent`, its launch agent in place of ssh), so MPI sees K hosts:
# shared memory between a node's ranks, TCP between nodes, as on a cluster.
# Set PARIO_NODE_SIZE=R for the program too (pario then agrees on the nodes).
#
# Knobs (options, or the variables in brackets):
#   --nodes K      client mounts, one per simulated node (TB_NODES, default 2)
#   --cache M      off (default): no client caching at all; every read, write and
#                  stat is a request to a brick (performance translators off,
#                  FUSE direct I/O, attribute and entry timeouts 0), the only
#                  mode in which several clients see one file coherently.
#                  nfslike: close-to-open, roughly NFS: write-behind (flushed at
#                  close and fsync) and the kernel page cache with its read-
#                  ahead, dropped at every open; metadata is never cached.
#                  Gluster's own read-ahead translator stays off: it is a second
#                  data cache inside the client process, which no NFS client
#                  has and which neither byte-range locks nor the kernel's
#                  cache controls (posix_fadvise) reach.
#                  (TB_CACHE)
#   --delay-us D   extra time every brick request takes, in microseconds, added
#                  on the server by Gluster's debug/delay-gen translator: a stand-
#                  in for network latency (TB_DELAY_US, default 0)
#   --mnt PATH     common mount path (TB_MNT, default /mnt/pario-tb)
#   --bricks B     bricks of the distributed volume (TB_BRICKS, default 2)
#   --brick-volumes  also B volumes of one brick each (bricks of their own in
#                  DATA/bricks/s1..sB, the same options), each mounted once at
#                  PATH-brick1 .. PATH-brickB: one directory per brick, the
#                  targets of a striped file (pario bench stripe) (TB_BRICK_VOLUMES=1)
#   --mpi-net M    shm (default): MPI between all ranks through shared memory.
#                  tcp: node k gets network namespace pario-tbN-n<k> at
#                  10.80.N.<k+1>, joined to the others by a bridge (10.80.N.254
#                  here); pario bench and pario run then launch through `agent`
#                  with Open MPI's TCP transport between nodes (TB_MPI_NET)
#   --instance N   0..99: independent test beds side by side, each with its own
#                  namespace, addresses 10.79.N.0/24, state and volume
#                  (TB_INSTANCE, default 0; the default PATH of N > 0 is
#                  /mnt/pario-tbN)
#
# `up` installs glusterfs-server and glusterfs-client through tools/deps.sh when
# they are missing, is idempotent and reconfigures a running test bed to the
# knobs given (clients are remounted when nodes, cache or delay change; bricks
# restart when the delay changes). `down` stops every process by its PID,
# removes the mounts, the namespace with its veth pair, the volume and its
# bricks; logs stay in /var/log/pario-testbed/tbN. `status` says what is up;
# `status --env` prints it as TB_* variables (exit 0 up, 1 down, 2 broken).
#
# Exit status 3: this machine cannot run the test bed (not root, no FUSE, no
# network namespaces, GlusterFS not installable); the message says which.
set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF=$TOOLS_DIR/$(basename "${BASH_SOURCE[0]}")
readonly TOOLS_DIR SELF
readonly VOLUME=pario
readonly DELAY_FOPS=lookup,open,create,read,write,fsync,flush,lk,inodelk,finodelk,entrylk,fentrylk,ftruncate,truncate,fstat,stat,setattr,fsetattr,unlink,mkdir,rmdir,rename,statfs,opendir,readdir,readdirp,getxattr,fgetxattr,setxattr,fsetxattr,xattrop,fxattrop,discard,fallocate,zerofill,seek
# Client-side performance translators of a Gluster volume.
readonly PERF_XLATORS="write-behind read-ahead io-cache quick-read stat-prefetch open-behind readdir-ahead nl-cache"
# Those that nfslike keeps: they are flushed at close and fsync, or cache
# nothing but directory listings and deferred opens. Not read-ahead: with its
# pages in the client process, a reader that dropped the kernel's cache under
# a lock still read other nodes' old bytes (docs/architecture.md, "A client
# that caches between opens").
readonly NFSLIKE_ON="write-behind open-behind readdir-ahead"
readonly EXIT_CANNOT=3

# ---- messages --------------------------------------------------------------------
say() { echo "testbed: $*"; }
warn() { echo "testbed: $*" >&2; }
die() { echo "testbed: error: $*" >&2; exit 1; }
cannot() { echo "testbed: cannot run here: $*" >&2; exit "$EXIT_CANNOT"; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

# ---- options -----------------------------------------------------------------------
parse_options() {
  NODES=${TB_NODES:-2}
  CACHE=${TB_CACHE:-off}
  DELAY_US=${TB_DELAY_US:-0}
  BRICKS=${TB_BRICKS:-2}
  BRICK_VOLUMES=${TB_BRICK_VOLUMES:-0}
  MPI_NET=${TB_MPI_NET:-shm}
  INSTANCE=${TB_INSTANCE:-0}
  MNT=${TB_MNT:-}
  RANKS_PER_NODE=${TB_RANKS_PER_NODE:-}
  ENV_OUTPUT=0
  PROGRAM=()
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) NODES=${2:?--nodes needs a number}; shift 2 ;;
      --cache) CACHE=${2:?--cache needs off or nfslike}; shift 2 ;;
      --delay-us) DELAY_US=${2:?--delay-us needs a number}; shift 2 ;;
      --bricks) BRICKS=${2:?--bricks needs a number}; shift 2 ;;
      --brick-volumes) BRICK_VOLUMES=1; shift ;;
      --mpi-net) MPI_NET=${2:?--mpi-net needs shm or tcp}; shift 2 ;;
      --instance) INSTANCE=${2:?--instance needs a number}; shift 2 ;;
      --mnt) MNT=${2:?--mnt needs a path}; shift 2 ;;
      --ranks-per-node) RANKS_PER_NODE=${2:?--ranks-per-node needs a number}; shift 2 ;;
      --env) ENV_OUTPUT=1; shift ;;
      --) shift; PROGRAM=("$@"); break ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$1' (tools/testbed.sh --help)" ;;
    esac
  done
  is_count "$INSTANCE" 0 99 || die "--instance must be 0..99, not '$INSTANCE'"
  is_count "$NODES" 1 64 || die "--nodes must be 1..64, not '$NODES'"
  is_count "$BRICKS" 1 16 || die "--bricks must be 1..16, not '$BRICKS'"
  is_count "$DELAY_US" 0 10000000 || die "--delay-us must be a number of microseconds, not '$DELAY_US'"
  case $CACHE in off|nfslike) ;; *) die "--cache must be off or nfslike, not '$CACHE'" ;; esac
  case $MPI_NET in shm|tcp) ;; *) die "--mpi-net must be shm or tcp, not '$MPI_NET'" ;; esac
  if [ -z "$MNT" ]; then
    if [ "$INSTANCE" = 0 ]; then MNT=/mnt/pario-tb; else MNT=/mnt/pario-tb$INSTANCE; fi
  fi
  case $MNT in /*) ;; *) die "--mnt must be an absolute path, not '$MNT'" ;; esac
  MNT=${MNT%/}
  # Everything of one instance is named after it.
  NS=pario-tb$INSTANCE
  HOST_IF=ptb${INSTANCE}h
  SRV_IF=ptb${INSTANCE}s
  HOST_IP=10.79.$INSTANCE.1
  SRV_IP=10.79.$INSTANCE.2
  DATA=/var/lib/pario-testbed/tb$INSTANCE
  LOGS=/var/log/pario-testbed/tb$INSTANCE
  STATE=$DATA/state
  LOCKFILE=/run/pario-testbed-tb$INSTANCE.lock
  # The simulated nodes' network with --mpi-net tcp: node k's namespace and
  # its veth pair (the -a end on the bridge here, the -b end in the node).
  NODE_NS=pario-tb$INSTANCE-n
  NODE_BRIDGE=ptb${INSTANCE}br
  NODE_NET=10.80.$INSTANCE
}

is_count() { # VALUE MIN MAX
  [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# ---- small helpers -----------------------------------------------------------------
# A process that exists and is not a zombie.
alive() {
  local stat
  [ -n "${1:-}" ] && stat=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$stat" ] && [[ $stat != Z* ]]
}

# A live process running GlusterFS's binary (glusterd, glusterfsd and glusterfs
# are one program), so a recycled PID is never taken for ours.
is_gluster() {
  alive "$1" && [[ $(readlink "/proc/$1/exe" 2>/dev/null) == */glusterfsd ]]
}

read_pid() { # FILE: the PID it holds, or nothing
  local pid=""
  [ -s "$1" ] && pid=$(tr -dc '0-9' < "$1")
  echo "$pid"
}

stop_pid() { # PID WHAT: TERM, up to 5 s, then KILL
  local pid=$1 what=$2
  is_gluster "$pid" || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
  warn "$what (pid $pid) did not stop on TERM: killing it"
  kill -9 "$pid" 2>/dev/null || true
}

is_mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts; }

wait_for() { # SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "$what: not ready after $seconds s (logs: $LOGS)"
}

# The Gluster command line, talking to this instance's glusterd over its socket.
gcli() {
  gluster --mode=script --glusterd-sock="$DATA/glusterd.socket" --log-file="$LOGS/cli.log" "$@"
}

state_get() { # KEY: a value of the applied configuration, or empty
  if [ -f "$STATE/config" ]; then sed -n "s/^$1=//p" "$STATE/config" | tail -1; fi
}

take_lock() {
  mkdir -p "$(dirname "$LOCKFILE")"
  exec {LOCKFD}>"$LOCKFILE"
  flock -w 300 "$LOCKFD" || die "another testbed.sh holds $LOCKFILE for more than 300 s"
}

# ---- prerequisites -----------------------------------------------------------------
check_machine() {
  [ "$(id -u)" = 0 ] || cannot "must run as root (network namespaces, FUSE mounts)"
  local tool
  for tool in ip unshare flock mountpoint; do
    command -v "$tool" >/dev/null || cannot "$tool not found (install iproute2 and util-linux)"
  done
  if [ ! -c /dev/fuse ]; then
    modprobe fuse 2>/dev/null || true
    [ -c /dev/fuse ] || cannot "no FUSE: /dev/fuse is missing (modprobe fuse; in a container, pass the device /dev/fuse)"
  fi
}

ensure_gluster() {
  if command -v glusterd >/dev/null && command -v glusterfs >/dev/null && command -v gluster >/dev/null; then
    return
  fi
  local log=$LOGS/install.log
  mkdir -p "$LOGS"
  say "installing glusterfs-server and glusterfs-client (tools/deps.sh testbed, log $log)"
  if ! bash "$TOOLS_DIR/deps.sh" testbed > "$log" 2>&1; then
    tail -n 15 "$log" >&2
    cannot "GlusterFS could not be installed from Debian's packages (apt-get's last messages above, all in $log): install glusterfs-server and glusterfs-client"
  fi
  if ! command -v glusterd >/dev/null || ! command -v glusterfs >/dev/null; then
    cannot "glusterd or glusterfs still missing after installing glusterfs-server and glusterfs-client"
  fi
}

# ---- network -----------------------------------------------------------------------
# Refuses a subnet (A.B.C, a /24) that something else here already routes.
subnet_free() {
  if ip route show | grep -q "^${1//./\\.}\\.0/24"; then
    die "$1.0/24 is already routed here: choose another --instance"
  fi
}

# A veth pair OUTER - INNER with INNER moved into namespace NS at ADDR/24.
veth_into() { # NS OUTER INNER ADDR
  ip link add "$2" type veth peer name "$3"
  ip link set "$3" netns "$1"
  ip netns exec "$1" ip addr add "$4/24" dev "$3"
}

# Both ends of a pair made by veth_into up, and the namespace's loopback.
veth_up() { # NS OUTER INNER
  ip link set "$2" up
  ip netns exec "$1" ip link set "$3" up
  ip netns exec "$1" ip link set lo up
}

ensure_network() {
  if [ ! -e "/run/netns/$NS" ]; then
    ip netns add "$NS" 2>/dev/null ||
      cannot "cannot create network namespace $NS (needs CAP_SYS_ADMIN; in a container, run it privileged)"
  fi
  if ! ip link show "$HOST_IF" >/dev/null 2>&1; then
    ip netns exec "$NS" ip link del "$SRV_IF" 2>/dev/null || true
    subnet_free "10.79.$INSTANCE"
    veth_into "$NS" "$HOST_IF" "$SRV_IF" "$SRV_IP"
    ip addr add "$HOST_IP/24" dev "$HOST_IF"
  fi
  veth_up "$NS" "$HOST_IF" "$SRV_IF"
}

remove_network() {
  ip link del "$HOST_IF" 2>/dev/null || true
  if [ -e "/run/netns/$NS" ]; then
    ip netns del "$NS" 2>/dev/null || warn "could not remove network namespace $NS"
  fi
}

# The nodes' namespaces on a bridge (--mpi-net tcp), 0..NODES-1; none with shm.
ensure_node_network() {
  local k have
  for have in /run/netns/"$NODE_NS"*; do # nodes no longer wanted
    [ -e "$have" ] || continue
    k=${have##*-n}
    if [ "$MPI_NET" != tcp ] || [ "$k" -ge "$NODES" ]; then remove_node "$k"; fi
  done
  if [ "$MPI_NET" != tcp ]; then
    ip link del "$NODE_BRIDGE" 2>/dev/null || true
    return
  fi
  if ! ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
    subnet_free "$NODE_NET"
    ip link add "$NODE_BRIDGE" type bridge
    ip addr add "$NODE_NET.254/24" dev "$NODE_BRIDGE"
  fi
  ip link set "$NODE_BRIDGE" up
  for k in $(seq 0 $((NODES - 1))); do
    [ -e "/run/netns/$NODE_NS$k" ] || ip netns add "$NODE_NS$k"
    if ! ip link show "ptb${INSTANCE}n${k}a" >/dev/null 2>&1; then
      veth_into "$NODE_NS$k" "ptb${INSTANCE}n${k}a" "ptb${INSTANCE}n${k}b" "$NODE_NET.$((k + 1))"
      ip link set "ptb${INSTANCE}n${k}a" master "$NODE_BRIDGE"
    fi
    veth_up "$NODE_NS$k" "ptb${INSTANCE}n${k}a" "ptb${INSTANCE}n${k}b"
  done
}

remove_node() { # K
  ip link del "ptb${INSTANCE}n${1}a" 2>/dev/null || true
  ip netns del "$NODE_NS$1" 2>/dev/null || warn "could not remove network namespace $NODE_NS$1"
}

remove_node_network() {
  local have
  for have in /run/netns/"$NODE_NS"*; do [ -e "$have" ] && remove_node "${have##*-n}"; done
  ip link del "$NODE_BRIDGE" 2>/dev/null || true
}

# ---- server --------------------------------------------------------------------------
write_glusterd_volfile() {
  cat > "$DATA/glusterd.vol" <<EOF
volume management
    type mgmt/glusterd
    option working-directory $DATA/glusterd
    option glusterd-sockfile $DATA/glusterd.socket
    option transport-type socket
    option transport.socket.listen-port 24007
    option transport.socket.keepalive-time 10
    option transport.socket.keepalive-interval 2
    option transport.socket.read-fail-log off
    option ping-timeout 0
    option event-threads 1
    option max-port 60999
end-volume
EOF
}

# glusterd runs in the server namespace with /run/gluster and /var/log/glusterfs
# bound to this instance's directories (ip netns exec gives it a mount namespace
# of its own), so the brick daemons it starts keep their pid files, sockets and
# logs apart from any other glusterd on the machine.
ensure_glusterd() {
  local pid
  pid=$(read_pid "$STATE/glusterd.pid")
  if is_gluster "$pid"; then return; fi
  mkdir -p "$DATA/glusterd" "$DATA/run" "$LOGS" "$STATE" /run/gluster /var/log/glusterfs
  write_glusterd_volfile
  say "starting glusterd in network namespace $NS ($SRV_IP)"
  # shellcheck disable=SC2016 # the inner shell expands its own arguments
  ip netns exec "$NS" /bin/sh -c '
      mount --bind "$1/run" /run/gluster && mount --bind "$2" /var/log/glusterfs &&
      exec glusterd -f "$1/glusterd.vol" -p "$3" --log-file="$2/glusterd.log"' \
    glusterd-start "$DATA" "$LOGS" "$STATE/glusterd.pid" {LOCKFD}>&- ||
    die "glusterd did not start (log: $LOGS/glusterd.log)"
  wait_for 30 "glusterd" gcli volume list
}

brick_pids() {
  local f
  for f in "$DATA"/run/vols/"$VOLUME"/*.pid; do
    [ -e "$f" ] && read_pid "$f"
  done
  return 0
}

# Volume options for a cache mode and a delay, as "key value" lines.
volume_options() {
  local x value
  for x in $PERF_XLATORS; do
    value=off
    if [ "$CACHE" = nfslike ] && [[ " $NFSLIKE_ON " == *" $x "* ]]; then value=on; fi
    echo "performance.$x $value"
  done
  # Close-to-open needs close to wait for the writes behind it.
  echo "performance.flush-behind off"
  if [ "$DELAY_US" -gt 0 ]; then
    echo "debug.delay-gen upcall"
    echo "delay-gen.delay-percentage 100"
    echo "delay-gen.delay-duration $DELAY_US"
    echo "delay-gen.enable $DELAY_FOPS"
  fi
}

ensure_volume() {
  if ! gcli volume info "$VOLUME" >/dev/null 2>&1; then
    say "creating volume $VOLUME: distributed over $BRICKS bricks in $DATA/bricks"
    local b bricks=()
    for b in $(seq "$BRICKS"); do
      rm -rf "$DATA/bricks/b$b"
      mkdir -p "$DATA/bricks/b$b"
      bricks+=("$SRV_IP:$DATA/bricks/b$b")
    done
    gcli volume create "$VOLUME" transport tcp "${bricks[@]}" force >/dev/null
    rm -f "$STATE/volume-options"
  fi
  local wanted applied restart=0
  wanted=$(volume_options)
  applied=$(cat "$STATE/volume-options" 2>/dev/null || true)
  if [ "$wanted" != "$applied" ]; then
    local key value
    while read -r key value; do
      gcli volume set "$VOLUME" "$key" "$value" >/dev/null
    done <<< "$wanted"
    # options set before and not wanted now go back to their defaults
    while read -r key value; do
      [ -n "$key" ] && ! grep -q "^$key " <<< "$wanted" && gcli volume reset "$VOLUME" "$key" >/dev/null
    done <<< "$applied"
    printf '%s\n' "$wanted" > "$STATE/volume-options"
    # delay-gen reads its options when a brick starts
    [ "$(grep '^d' <<< "$wanted")" = "$(grep '^d' <<< "$applied")" ] || restart=1
  fi
  if gcli volume info "$VOLUME" | grep -q '^Status: Started'; then
    if [ "$restart" = 1 ]; then
      say "restarting the bricks (delay $DELAY_US us)"
      gcli volume stop "$VOLUME" force >/dev/null
      gcli volume start "$VOLUME" >/dev/null
    else
      gcli volume start "$VOLUME" force >/dev/null # restarts any brick that died
    fi
  else
    gcli volume start "$VOLUME" >/dev/null
  fi
  wait_for 30 "brick daemons" all_bricks_up
}

# --brick-volumes: volume $VOLUME-bK of the one brick sK for every K, started,
# with the main volume's options, each mounted once at $MNT-brickK.
ensure_brick_volumes() {
  [ "$BRICK_VOLUMES" = 1 ] || return 0
  local b v key value
  for b in $(seq "$BRICKS"); do
    v=$VOLUME-b$b
    if ! gcli volume info "$v" >/dev/null 2>&1; then
      rm -rf "$DATA/bricks/s$b"
      mkdir -p "$DATA/bricks/s$b"
      gcli volume create "$v" transport tcp "$SRV_IP:$DATA/bricks/s$b" force >/dev/null
      while read -r key value; do
        gcli volume set "$v" "$key" "$value" >/dev/null
      done <<< "$(volume_options)"
    fi
    gcli volume start "$v" force >/dev/null
  done
}

mount_brick_volumes() {
  [ "$BRICK_VOLUMES" = 1 ] || return 0
  local b m
  for b in $(seq "$BRICKS"); do
    m=$MNT-brick$b
    is_mounted "$m" && continue
    mkdir -p "$m"
    # shellcheck disable=SC2046 # the FUSE options are words
    glusterfs --process-name fuse --volfile-server="$SRV_IP" --volfile-id="$VOLUME-b$b" \
      $(fuse_options) --pid-file="$STATE/client-brick$b.pid" --log-file="$LOGS/client-brick$b.log" \
      "$m" {LOCKFD}>&- || die "mounting $m failed (log: $LOGS/client-brick$b.log)"
    echo "$m" >> "$STATE/mounts"
    wait_for 20 "mount $m" mountpoint -q "$m"
    wait_for 30 "client of brick volume $b" mount_ready "$m"
  done
}

all_bricks_up() {
  local n=0 pid
  for pid in $(brick_pids); do is_gluster "$pid" && n=$((n + 1)); done
  [ "$n" -ge "$BRICKS" ]
}

stop_servers() {
  local pid
  for pid in $(brick_pids); do stop_pid "$pid" "brick daemon"; done
  stop_pid "$(read_pid "$STATE/glusterd.pid")" glusterd
  # anything else glusterd started in the namespace (it is ours alone)
  if [ -e "/run/netns/$NS" ]; then
    for pid in $(ip netns pids "$NS" 2>/dev/null); do stop_pid "$pid" "gluster process"; done
  fi
}

# ---- clients -------------------------------------------------------------------------
fuse_options() {
  case $CACHE in
    off) echo --direct-io-mode=enable --attribute-timeout=0 --entry-timeout=0 --negative-timeout=0 ;;
    nfslike) echo --direct-io-mode=disable --attribute-timeout=0 --entry-timeout=0 --negative-timeout=0 --fopen-keep-cache=false ;;
  esac
}

# What the clients were mounted with; a change remounts them all.
client_signature() { echo "mnt=$MNT nodes=$NODES cache=$CACHE delay=$DELAY_US"; }

mount_node() { # K
  local k=$1 m="$MNT-node$1"
  mkdir -p "$m"
  is_mounted "$m" && die "$m is already mounted by something else: unmount it or choose another --mnt"
  # shellcheck disable=SC2046 # the FUSE options are words
  glusterfs --process-name fuse --volfile-server="$SRV_IP" --volfile-id="$VOLUME" \
    $(fuse_options) --pid-file="$STATE/client-node$k.pid" --log-file="$LOGS/client-node$k.log" \
    "$m" {LOCKFD}>&- || die "mounting $m failed (log: $LOGS/client-node$k.log)"
  echo "$m" >> "$STATE/mounts"
  wait_for 20 "mount $m" mountpoint -q "$m"
}

mount_ready() { # MOUNT: the client answers a create and an unlink
  local probe="$1/.testbed-ready.$$"
  # shellcheck disable=SC2016 # the inner shell expands its own arguments
  timeout 5 sh -c ': > "$1" && rm -f "$1"' probe "$probe"
}

ensure_clients() {
  local k healthy=1 signature
  signature=$(client_signature)
  if [ "$(cat "$STATE/clients" 2>/dev/null || true)" = "$signature" ]; then
    for k in $(seq 0 $((NODES - 1))); do
      is_gluster "$(read_pid "$STATE/client-node$k.pid")" && is_mounted "$MNT-node$k" || healthy=0
    done
    is_mounted "$MNT" || healthy=0
    [ "$healthy" = 1 ] && return
  fi
  unmount_clients
  for k in $(seq 0 $((NODES - 1))); do mount_node "$k"; done
  mkdir -p "$MNT"
  is_mounted "$MNT" && die "$MNT is already mounted by something else: unmount it or choose another --mnt"
  mount --bind "$MNT-node0" "$MNT"
  echo "$MNT" >> "$STATE/mounts"
  for k in $(seq 0 $((NODES - 1))); do wait_for 30 "client of node $k" mount_ready "$MNT-node$k"; done
  echo "$signature" > "$STATE/clients"
}

# Unmounts what up mounted, the bind mount first; stops each client by its PID.
unmount_clients() {
  local m f pid
  if [ -f "$STATE/mounts" ]; then
    tac "$STATE/mounts" | while read -r m; do
      [ -n "$m" ] || continue
      case $m in *-node[0-9]*)
        pid=$(read_pid "$STATE/client-node${m##*-node}.pid")
        stop_pid "$pid" "client of $m" ;;
      *-brick[0-9]*)
        pid=$(read_pid "$STATE/client-brick${m##*-brick}.pid")
        stop_pid "$pid" "client of $m" ;;
      esac
      if is_mounted "$m"; then umount "$m" 2>/dev/null || umount -l "$m" || warn "could not unmount $m"; fi
      rmdir "$m" 2>/dev/null || true
    done
  fi
  for f in "$STATE"/client-node*.pid "$STATE"/client-brick*.pid; do
    [ -e "$f" ] || continue
    stop_pid "$(read_pid "$f")" "client"
    rm -f "$f"
  done
  rm -f "$STATE/mounts" "$STATE/clients"
}

# ---- verbs ---------------------------------------------------------------------------
cmd_up() {
  check_machine
  ensure_gluster
  take_lock
  local started=$SECONDS
  # A different number of bricks needs a new volume.
  if [ -f "$STATE/config" ] && [ "$(state_get bricks)" != "$BRICKS" ]; then
    say "the volume has $(state_get bricks) bricks, $BRICKS wanted: recreating it"
    teardown
  fi
  mkdir -p "$STATE" "$LOGS"
  ensure_network
  ensure_node_network
  ensure_glusterd
  # the clients go before the bricks restart
  if [ "$(cat "$STATE/clients" 2>/dev/null || true)" != "$(client_signature)" ]; then unmount_clients; fi
  ensure_volume
  ensure_brick_volumes
  ensure_clients
  mount_brick_volumes
  {
    echo "instance=$INSTANCE"
    echo "mnt=$MNT"
    echo "nodes=$NODES"
    echo "cache=$CACHE"
    echo "delay_us=$DELAY_US"
    echo "bricks=$BRICKS"
    echo "server_ip=$SRV_IP"
    echo "mpi_net=$MPI_NET"
    [ "$MPI_NET" = tcp ] && echo "mpi_subnet=$NODE_NET.0/24"
    echo "gluster_version=$(gluster_version)"
  } > "$STATE/config"
  say "up in $((SECONDS - started)) s"
  show_status
}

gluster_version() {
  glusterfs --version 2>/dev/null | sed -n '1s/^glusterfs \([0-9.]*\).*/\1/p'
}

teardown() {
  unmount_clients
  stop_servers
  remove_network
  remove_node_network
  rm -rf "$DATA"
}

cmd_down() {
  [ "$(id -u)" = 0 ] || cannot "must run as root"
  take_lock
  if [ ! -d "$DATA" ] && [ ! -e "/run/netns/$NS" ]; then
    say "test bed $INSTANCE is not up"
    return 0
  fi
  local mnt
  mnt=$(state_get mnt)
  teardown
  say "test bed $INSTANCE is down${mnt:+ ($mnt and its node mounts removed)}; logs in $LOGS"
}

# Sets STATUS (up, down or broken) and PROBLEMS from what is running.
assess() {
  PROBLEMS=()
  if [ ! -f "$STATE/config" ]; then
    if [ -d "$DATA" ] || [ -e "/run/netns/$NS" ]; then
      STATUS=broken; PROBLEMS+=("left over from an interrupted up or down: run down")
    else
      STATUS=down
    fi
    return
  fi
  local k nodes mnt pid
  nodes=$(state_get nodes); mnt=$(state_get mnt)
  [ -e "/run/netns/$NS" ] || PROBLEMS+=("network namespace $NS is missing")
  is_gluster "$(read_pid "$STATE/glusterd.pid")" || PROBLEMS+=("glusterd is not running")
  local running=0
  for pid in $(brick_pids); do is_gluster "$pid" && running=$((running + 1)); done
  [ "$running" -ge "$(state_get bricks)" ] || PROBLEMS+=("$running of $(state_get bricks) brick daemons running")
  for k in $(seq 0 $((nodes - 1))); do
    is_gluster "$(read_pid "$STATE/client-node$k.pid")" || PROBLEMS+=("client of node $k is not running")
    is_mounted "$mnt-node$k" || PROBLEMS+=("$mnt-node$k is not mounted")
  done
  is_mounted "$mnt" || PROBLEMS+=("$mnt is not mounted")
  if [ "$(state_get mpi_net)" = tcp ]; then
    for k in $(seq 0 $((nodes - 1))); do
      [ -e "/run/netns/$NODE_NS$k" ] || PROBLEMS+=("network namespace $NODE_NS$k of node $k is missing")
    done
  fi
  if [ ${#PROBLEMS[@]} -eq 0 ]; then STATUS=up; else STATUS=broken; fi
}

show_status() {
  assess
  if [ "$ENV_OUTPUT" = 1 ]; then
    echo "TB_STATUS=$STATUS"
    echo "TB_INSTANCE=$INSTANCE"
    if [ -f "$STATE/config" ]; then
      echo "TB_FS=glusterfs"
      sed -e 's/^\([a-z_]*\)=/\U\1=/' -e 's/^/TB_/' "$STATE/config"
    fi
  else
    case $STATUS in
      down) say "test bed $INSTANCE is down" ;;
      *)
        local mnt nodes pid k brick_pids_text="" clients=""
        mnt=$(state_get mnt); nodes=$(state_get nodes)
        for pid in $(brick_pids); do brick_pids_text+=" $pid"; done
        echo "test bed $INSTANCE: $STATUS"
        echo "  server:  GlusterFS $(state_get gluster_version), glusterd (pid $(read_pid "$STATE/glusterd.pid")) in network namespace $NS at $(state_get server_ip), reached over veth $HOST_IF"
        echo "  volume:  $VOLUME, distributed over $(state_get bricks) bricks in $DATA/bricks (brick pids:${brick_pids_text:- none})"
        echo "  cache:   $(state_get cache)$([ "$(state_get cache)" = off ] && echo ' (no client caching: FUSE direct I/O, attribute and entry timeouts 0)' || echo ' (close-to-open: page cache dropped at open, write-behind flushed at close, no metadata cache)')"
        echo "  delay:   $(state_get delay_us) us per brick request"
        echo "  options: $(sed -e 's/ /=/' "$STATE/volume-options" 2>/dev/null | tr '\n' ' ')"
        for k in $(seq 0 $((nodes - 1))); do clients+=" $mnt-node$k (client pid $(read_pid "$STATE/client-node$k.pid"))"; done
        echo "  nodes:   $nodes:$clients"
        if [ "$(state_get mpi_net)" = tcp ]; then
          echo "  mpi:     TCP between nodes (namespaces $NODE_NS<k> at $NODE_NET.<k+1>, bridge $NODE_BRIDGE), shared memory within a node"
        else
          echo "  mpi:     shared memory between all ranks (one host to MPI)"
        fi
        echo "  common:  $mnt (node 0's mount; ranks see their own node's mount here through tools/testbed.sh node)"
        local p
        for p in "${PROBLEMS[@]}"; do echo "  PROBLEM: $p"; done
        ;;
    esac
  fi
  case $STATUS in up) return 0 ;; down) return 1 ;; *) return 2 ;; esac
}

cmd_status() {
  show_status
}

# The per-rank wrapper: binds the node's mount over the common path in a private
# mount namespace and runs the program there. A library meant for the program
# alone comes as TB_PRELOAD and becomes its LD_PRELOAD at the last exec, so the
# wrapper's own processes (bash, unshare, mount, hostname) do not load it: a
# preloaded MPI-IO library made each of them load the MPI library too, about
# 0.5 s per run of 4 ranks that only the preloading back end paid.
cmd_node() {
  [ ${#PROGRAM[@]} -gt 0 ] || die "node: no program (testbed.sh node --ranks-per-node R -- PROGRAM ARGS)"
  [ "$(id -u)" = 0 ] || cannot "node: must run as root (it binds its node's mount in a mount namespace)"
  is_count "${RANKS_PER_NODE:-x}" 1 1000000 || die "node: --ranks-per-node R (or TB_RANKS_PER_NODE) is required"
  local rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
  [ -n "$rank" ] || die "node: cannot tell this process's MPI rank (no OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK): run it under mpiexec"
  local node=$((rank / RANKS_PER_NODE))
  local own="$MNT-node$node"
  is_mounted "$own" || die "node: rank $rank belongs to node $node, but $own is not mounted (tools/testbed.sh up --nodes $((node + 1)) or more)"
  exec unshare --mount --uts --propagation private -- "$SELF" _bind "$node" "$own" "$MNT" "${PROGRAM[@]}"
}

# Inside the private mount and host-name namespaces of cmd_node. The host name
# is the node's, so MPI_Get_processor_name tells the nodes apart as on a
# cluster (ROMIO then places one aggregator per node, as it would there).
cmd_bind() { # NODE SOURCE TARGET PROGRAM...
  local node=$1 source=$2 target=$3
  shift 3
  mount --bind "$source" "$target" || die "node: cannot bind $source over $target"
  hostname "pario-tb-node$node" || die "node: cannot set the host name of node $node"
  [ -z "${TB_PRELOAD:-}" ] || export LD_PRELOAD="$TB_PRELOAD"
  exec "$@"
}

# mpiexec's launch agent with --mpi-net tcp, in place of ssh: runs the
# daemon's command line for host pario-tb-node<k> in node k's network
# namespace, under that host name. Options before the host (ssh's) are
# ignored.
cmd_agent() {
  while [[ ${1:-} == -* ]]; do shift; done
  local host=${1:?agent: no host} k
  shift
  k=${host#pario-tb-node}
  is_count "$k" 0 63 && [ -e "/run/netns/$NODE_NS$k" ] ||
    die "agent: $host is not a node of test bed $INSTANCE with --mpi-net tcp"
  exec ip netns exec "$NODE_NS$k" unshare --uts -- sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
}

main() {
  local verb=${1:-}
  [ $# -gt 0 ] && shift
  case $verb in
    up) parse_options "$@"; cmd_up ;;
    down) parse_options "$@"; cmd_down ;;
    status) parse_options "$@"; cmd_status ;;
    node) parse_options "$@"; cmd_node ;;
    _bind) cmd_bind "$@" ;;
    agent) parse_options; cmd_agent "$@" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
