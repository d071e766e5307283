"""Ray for the package's pools (tournament games, self-play actors): connecting, and the checks made
before any work starts.

    dnb tournament ... --backend ray                        # a local Ray instance, started and stopped here
    dnb tournament ... --backend ray --ray-address auto     # the cluster this machine joined (`ray start`)
    dnb train ... --backend ray --ray-address 10.0.0.5:6379

Ray is optional (``pip install 'dnb-env[ray]'``). Every bad input is a ``ValueError`` raised before a game is
played or a file written: Ray not installed, an address that does not answer (checked with a TCP connect
of ``timeout`` seconds first: ``ray.init`` itself waits minutes on an unreachable address), more CPUs or GPUs
asked for than the cluster has. Scheduling and fault tolerance are Ray's (task retries, actor restarts);
nothing here re-implements them.
"""

from __future__ import annotations

import socket

__all__ = ["BACKENDS", "INSTALL_HINT", "require_ray", "check_backend", "RaySession", "check_reachable",
           "check_resources"]

BACKENDS = ("local", "ray")
INSTALL_HINT = "pip install 'dnb-env[ray]'"


def require_ray():
    """The ``ray`` module, or a ``ValueError`` that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ValueError(f"the ray backend needs Ray, which is not installed ({exc}): {INSTALL_HINT}") from None
    return ray


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")


def _host_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of a Ray address (``ray://host:port`` for Ray Client), or None for ``auto``/``local``."""
    if address in ("auto", "local"):
        return None
    text = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"a Ray address is auto or HOST:PORT (e.g. 10.0.0.5:6379), not {address!r}")
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """A ``ValueError`` unless something accepts TCP connections at ``address`` within ``timeout`` s."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as exc:
        raise ValueError(f"cannot reach a Ray cluster at {address} ({exc.strerror or exc}); start one with "
                         f"`ray start --head` there, or leave --ray-address out to start a local one") from None


class RaySession:
    """Ray for the length of a run: joins the instance this process already has, or the cluster at
    ``address``, or (``address`` None) starts a local instance with ``num_cpus`` CPUs (None: every core)
    that :meth:`close` stops again. A session that joined something leaves it running."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None, timeout: float = 5.0):
        ray = self.ray = require_ray()
        self.started = False
        if address is not None:
            check_reachable(address, timeout)  # also when this process has Ray already: an address must answer
        if ray.is_initialized():
            return
        if address is None:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        else:
            try:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
            except ConnectionError as exc:
                raise ValueError(f"cannot join the Ray cluster at {address}: {exc}") from None
        self.started = True

    def resources(self) -> dict:
        return self.ray.cluster_resources()

    def close(self) -> None:
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def check_resources(resources: dict, cpus: float = 0, gpus: float = 0, what: str = "the run") -> None:
    """A ``ValueError`` unless ``resources`` (``ray.cluster_resources()``) hold ``cpus`` CPUs and ``gpus`` GPUs
    at once (Ray would otherwise wait for them for ever)."""
    have_cpu, have_gpu = resources.get("CPU", 0), resources.get("GPU", 0)
    if cpus > have_cpu:
        raise ValueError(f"{what} asks for {cpus:g} CPUs at once but the Ray cluster has {have_cpu:g}; use fewer "
                         f"workers or threads, or add machines (`ray start --address=...`)")
    if gpus > have_gpu:
        raise ValueError(f"{what} asks for {gpus:g} GPU(s) but the Ray cluster has {have_gpu:g}")
