"""A Ray cluster on this machine, as the tests and benchmarks start it: a head node
and a worker node on 127.0.0.1, each its own processes (GCS, raylet, workers)."""

from __future__ import annotations

import os

# Keep Ray on loopback (it would swap 127.0.0.1 for the machine's address) and quiet.
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


class LocalCluster:
    """A head node and one worker node on 127.0.0.1, `cpus` CPUs each unless
    `head_cpus` gives the head its own number (0: it only coordinates)."""

    def __init__(self, cpus: int = 1, head_cpus: int | None = None) -> None:
        from ray.cluster_utils import Cluster

        before = {key: os.environ.get(key) for key in RAY_ENV}
        os.environ.update(RAY_ENV)
        try:
            self.cluster = Cluster(
                initialize_head=True,
                connect=False,
                head_node_args={
                    "num_cpus": cpus if head_cpus is None else head_cpus,
                    "node_ip_address": "127.0.0.1",
                    "include_dashboard": False,
                },
            )
            self.worker = self.cluster.add_node(num_cpus=cpus, node_ip_address="127.0.0.1")
            self.cluster.wait_for_nodes()
        finally:
            for key, value in before.items():
                if value is None:
                    os.environ.pop(key)
                else:
                    os.environ[key] = value
        self.address = self.cluster.address
        self.head_id = self.cluster.head_node.node_id
        self.worker_id = self.worker.node_id

    def kill_worker(self) -> None:
        self.cluster.remove_node(self.worker, allow_graceful=False)

    def shutdown(self) -> None:
        self.cluster.shutdown()
