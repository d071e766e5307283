"""Self-play positions per second: the local backend beside 1 and 2 Ray actors on this machine (Ray's
overhead on one box), and the weights each iteration sends through Ray's object store.

    python benchmarks/ray_scaling.py [--board 3x3] [--games 16] [--simulations 50] [--iterations 3]
    python benchmarks/ray_scaling.py --ray-address auto --actors 1,2,4,8        # on a cluster
    python benchmarks/ray_scaling.py --actors 2 --shared 2 --local-workers 1     # per-actor vs shared inference

Each setup plays ``--iterations`` timed iterations of ``--games`` games (each after an untimed one that
starts its processes or actors) with the same untrained network (``--preset cpu`` model) from the empty
board (``--start 0``); every setup plays the same games (per-game seeds), which is checked. The setups take
turns iteration by iteration, so load from other work on the machine falls on all of them alike; the
table gives the rate over all timed iterations and the slowest and fastest iteration's. Without
``--ray-address`` a local Ray instance of ``--num-cpus`` CPUs is started. The object-store rows: the bytes of
the state dict put once per iteration and fetched by every actor's node (on one machine actors read it from
shared memory), for the benchmarked network, the shipped 5x5 network and the paper-size Dotsformer (5x5).

``--shared N``: a setup "ray xN shared" of N actors whose leaves go to one inference actor (``inference=shared``;
on the CPU here, ``threads`` CPUs of its own). Its games are the others' only up to float noise (the forward
passes run over other batches), so for it only the positions are checked, which every game fixes. The local
instance gets enough logical CPUs for the largest setup (more than the cores when they are few).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import torch

from agents.models import build_model, make_model_config
from agents.processes import limit_threads
from agents.ray_cluster import RaySession
from agents.training.config import make_train_config
from agents.training.loop import make_pool


def weights_bytes(net) -> int:
    return sum(v.numel() * v.element_size() for v in net.state_dict().values())


def shipped_5x5_bytes() -> int | None:
    from agents.checkpoint import load_network
    from agents.network_agent import shipped_checkpoint

    try:
        net, _ = load_network(shipped_checkpoint("5x5"))
    except Exception:  # noqa: BLE001 - not shipped in this checkout
        return None
    return weights_bytes(net)


def timed(pool, net, iteration: int, start: int, threads: int) -> tuple[float, int]:
    """(seconds, positions) of one iteration of ``pool``; this process's torch at ``threads`` threads, as in
    training (it plays the games itself when the pool has one local worker)."""
    with limit_threads(threads):
        t = time.perf_counter()
        _, stats = pool.play(net, iteration, start)
        return time.perf_counter() - t, stats["positions"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--model", default="resnet")
    p.add_argument("--games", type=int, default=16, help="games per iteration")
    p.add_argument("--simulations", type=int, default=50)
    p.add_argument("--iterations", type=int, default=3, help="timed iterations per setup")
    p.add_argument("--start", type=int, default=0, help="first searched move (0: whole games searched)")
    p.add_argument("--actors", default="1,2", help="Ray actor counts to measure")
    p.add_argument("--shared", default="", help="Ray actor counts to measure with one shared inference actor")
    p.add_argument("--local-workers", default="1,2", help="local backend worker counts (1: in this process)")
    p.add_argument("--ray-address", default=None, help="auto or HOST:PORT; default: a local Ray instance")
    p.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs of the local Ray instance (default: the cores, or what the largest setup needs)")
    args = p.parse_args(argv)
    base = make_train_config(args.model, "cpu", board=args.board, games_per_iteration=args.games,
                             simulations=args.simulations, seed=0)
    setups = {f"local x{w}": dataclasses.replace(base, workers=w)
              for w in map(int, filter(None, args.local_workers.split(",")))}
    setups |= {f"ray x{a}": dataclasses.replace(base, workers=a, backend="ray")
               for a in map(int, filter(None, args.actors.split(",")))}
    setups |= {f"ray x{a} shared": dataclasses.replace(base, workers=a, backend="ray", inference="shared")
               for a in map(int, filter(None, args.shared.split(",")))}
    need = max([c.workers * c.threads + (c.threads if c.shared_inference else 0) for c in setups.values()
                if c.backend == "ray"], default=1)
    num_cpus = args.num_cpus if args.num_cpus is not None else max(os.cpu_count() or 1, need)
    torch.manual_seed(0)
    net = build_model(base.model)
    use_ray = any(c.backend == "ray" for c in setups.values())
    session = RaySession(args.ray_address, num_cpus=num_cpus) if use_ray else None
    times = {name: [] for name in setups}
    per = {name: [] for name in setups}
    try:
        for it in range(1, args.iterations + 1):  # interleaved, so that load from elsewhere hits every setup
            for name, cfg in setups.items():  # one at a time: a local Ray instance holds one setup's actors
                pool = make_pool(cfg, args.ray_address)
                try:
                    timed(pool, net, 0, args.start, cfg.threads)  # warm-up: processes/actors start, nets built
                    seconds, positions = timed(pool, net, it, args.start, cfg.threads)
                finally:
                    pool.close()
                times[name].append(seconds)
                per[name].append(positions)
    finally:
        if session is not None:
            session.close()
    rows = {name: (sum(per[name]) / sum(times[name]), sum(per[name]), sum(times[name]),
                   min(p / t for p, t in zip(per[name], times[name])),
                   max(p / t for p, t in zip(per[name], times[name]))) for name in setups}
    assert len({tuple(v) for v in per.values()}) == 1, f"setups played different games: {per}"
    reference = next(iter(rows.values()))[0]
    print(f"self-play on {args.board}, {args.model} (cpu preset), {args.games} games x {args.iterations} iterations, "
          f"{args.simulations} simulations, from move {args.start}; {os.cpu_count()} cores here")
    print(f"{'setup':<14} {'positions/s':>12} {'per iteration min-max':>22} {'positions':>10} {'seconds':>8} "
          f"{'vs first':>9}")
    for name, (rate, positions, seconds, low, high) in rows.items():
        print(f"{name:<14} {rate:>12.1f} {low:>10.1f} - {high:<9.1f} {positions:>10d} {seconds:>8.2f} "
              f"{rate / reference:>8.2f}x")
    sizes = {f"{args.model} cpu {args.board} (benchmarked)": weights_bytes(build_model(base.model)),
             "shipped alphazero 5x5": shipped_5x5_bytes(),
             "dotsformer paper 5x5": weights_bytes(build_model(make_model_config("dotsformer", preset="paper",
                                                                                 board="5x5")))}
    print("\nobject store per iteration: one ray.put of the weights, fetched once per node that hosts actors")
    for name, size in sizes.items():
        if size is not None:
            print(f"  {name:<34} {size / 2**20:8.2f} MiB; x 10 nodes {10 * size / 2**20:8.1f} MiB; "
                  f"x 100 nodes {100 * size / 2**20:8.1f} MiB")
    return {"rates": {name: r[0] for name, r in rows.items()}, "weights_bytes": sizes}


if __name__ == "__main__":
    main()
