"""The network file system test bed (tools/testbed.sh) as `pario run` and `pario bench`
use it: a GlusterFS volume served from a network namespace, one FUSE client mount per
simulated node, and a per-rank wrapper that gives every rank its node's mount at the
common path.

A run on K nodes with N ranks puts ranks [k*N/K, (k+1)*N/K) on node k: the wrapper
binds that node's mount over the common path, and PARIO_NODE_SIZE=N/K tells pario the
same split. On a test bed brought up with `--mpi-net tcp` the launch also gives every
node its own Open MPI daemon in the node's network namespace (testbed.sh agent), so
ranks of one node share memory and ranks of different nodes talk TCP.
"""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pario_env

CACHE_MODES = ("off", "nfslike")
DEFAULT_NODES = 2
SCRIPT_NAME = "testbed.sh"


def find_script(build_dir=None):
    """tools/testbed.sh: beside this module (run from tools/) or in the build's sources."""
    return pario_env.find_tool_script(SCRIPT_NAME, build_dir)


class Testbed:
    """One test bed instance: its state, bringing it up, and the per-rank wrapper."""

    def __init__(self, script):
        self.script = Path(script)

    def command(self, verb, *args):
        return ["bash", str(self.script), verb, *args]

    def status(self):
        """The TB_* variables of `testbed.sh status --env`, without the prefix, lower case."""
        proc = subprocess.run(self.command("status", "--env"), capture_output=True, text=True)
        state = {}
        for line in proc.stdout.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.startswith("TB_"):
                state[key[3:].lower()] = value
        if "status" not in state:
            raise pario_env.SetupError(f"{self.script} status failed: {proc.stderr.strip()}")
        return state

    @staticmethod
    def fits(state, nodes, cache, delay_us):
        return (state.get("status") == "up" and int(state.get("nodes", 0)) >= nodes and
                state.get("cache") == cache and int(state.get("delay_us", -1)) == delay_us)

    def up_command(self, nodes, cache, delay_us):
        return self.command("up", "--nodes", str(nodes), "--cache", cache,
                            "--delay-us", str(delay_us))

    def ensure(self, nodes, cache, delay_us):
        """Brings the test bed up with these knobs unless it already runs with them (or
        with more nodes). Returns (state, what it was before: 'fits', 'down' or
        'other')."""
        state = self.status()
        if self.fits(state, nodes, cache, delay_us):
            return state, "fits"
        before = "down" if state["status"] == "down" else "other"
        cmd = self.up_command(nodes, cache, delay_us)
        if os.geteuid() != 0:
            raise pario_env.SetupError(
                "the test bed is not up with these knobs and only root can bring it up: run\n"
                f"  sudo {shlex.join(cmd)}")
        print(f"pario: bringing the test bed up: {shlex.join(cmd)}", file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, stdout=sys.stderr)
        if proc.returncode != 0:
            raise pario_env.SetupError(f"the test bed did not come up ({shlex.join(cmd)} exited "
                                       f"with {proc.returncode})")
        state = self.status()
        if not self.fits(state, nodes, cache, delay_us):
            raise pario_env.SetupError(f"the test bed is {state.get('status')} after "
                                       f"{shlex.join(cmd)}")
        return state, before

    def down(self):
        subprocess.run(self.command("down"), stdout=sys.stderr)

    def wrapper(self, mnt, ranks_per_node):
        """The command in front of each rank's program."""
        return self.command("node", "--mnt", mnt, "--ranks-per-node", str(ranks_per_node), "--")

    def launch(self, mpi, ranks, backend, env, state, nodes):
        """mpiexec (pario_env.MpiEnv `mpi`) up to the program for `ranks` ranks of
        `backend` on the first `nodes` simulated nodes of the test bed in `state`: the
        variables of `env` and PARIO_NODE_SIZE in every rank, the test bed's MPI network,
        and the wrapper that puts each rank on its node's mount."""
        per_node = ranks_per_node(ranks, nodes)
        prefix = mpi.launch_prefix(ranks, backend, dict(env, PARIO_NODE_SIZE=per_node))
        return (self.network_launch(prefix, state, nodes, per_node) +
                self.wrapper(state["mnt"], per_node))

    def network_launch(self, prefix, state, nodes, ranks_per_node):
        """An Open MPI launch prefix (pario_env.MpiEnv.launch_prefix) for the test bed's
        MPI network: unchanged with shared memory; with --mpi-net tcp, one daemon per node
        started by testbed.sh agent in the node's namespace, ranks_per_node ranks on each
        of the first `nodes` hosts, shared memory within a node and TCP between nodes."""
        if state.get("mpi_net") != "tcp":
            return prefix
        if "--mca" not in prefix or "self,vader" not in prefix:
            raise pario_env.SetupError("the test bed's --mpi-net tcp needs Open MPI's mpiexec")
        subnet = state["mpi_subnet"]
        hosts = ",".join(f"pario-tb-node{k}:{ranks_per_node}" for k in range(nodes))
        cmd = ["self,vader,tcp" if a == "self,vader" else a for a in prefix]
        # Each daemon sees its node's slots filled, not oversubscribed, and would
        # let its ranks poll without yielding: on 2 cores shared by every node that
        # made an 8-byte round trip take 4-8 ms instead of 7-45 µs.
        return cmd[:1] + ["--host", hosts, "--mca", "plm_rsh_agent",
                          f"{self.script} agent", "--mca", "oob_tcp_if_include", subnet,
                          "--mca", "btl_tcp_if_include", subnet,
                          "--mca", "mpi_yield_when_idle", "1",
                          # Open MPI 4.1's osc rdma over the TCP transport makes windows
                          # spanning nodes whose first RMA call fails ("invalid window");
                          # pt2pt works (below MPI_THREAD_MULTIPLE). pario's shared
                          # pointer copes either way; its cache and pgas need RMA.
                          "--mca", "osc", "sm,pt2pt"] + cmd[1:]


def preload_past_wrapper(cmd):
    """A launch command whose LD_PRELOAD (-x or -genv) reaches only the program behind
    the wrapper (testbed.sh node sets it from TB_PRELOAD at its last exec)."""
    return [("TB_PRELOAD=" + a[len("LD_PRELOAD="):]) if a.startswith("LD_PRELOAD=")
            else "TB_PRELOAD" if a == "LD_PRELOAD" else a for a in cmd]


def ranks_per_node(ranks, nodes):
    """Ranks of each node; nodes must divide the ranks evenly."""
    if nodes < 1 or ranks % nodes:
        raise pario_env.SetupError(f"{ranks} ranks cannot be split evenly into {nodes} nodes")
    return ranks // nodes


def describe(state, nodes, ranks):
    """The file system record of a result document."""
    return {
        "testbed": True,
        "type": "glusterfs",
        "version": state.get("gluster_version"),
        "layout": f"distribute over {state.get('bricks')} bricks",
        "transport": "TCP over a veth pair into a network namespace on the same machine",
        "mpi_net": ("TCP between nodes, shared memory within a node"
                    if state.get("mpi_net") == "tcp" else "shared memory between all ranks"),
        "cache": state.get("cache"),
        "delay_us": int(state.get("delay_us", 0)),
        "nodes": nodes,
        "ranks_per_node": ranks // nodes,
        "client_mounts": int(state.get("nodes", nodes)),
        "mount": state.get("mnt"),
    }


def summary(fs):
    """One line for reports: 'GlusterFS test bed, 2 nodes x 2 ranks, cache off, no delay'."""
    delay = f"{fs['delay_us']} µs delay per request" if fs.get("delay_us") else "no delay"
    return (f"GlusterFS {fs.get('version') or ''} test bed".replace("  ", " ") +
            f", {fs['nodes']} nodes x {fs['ranks_per_node']} ranks, cache {fs.get('cache')}, "
            f"{delay}")
