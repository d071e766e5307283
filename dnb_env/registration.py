"""Registration of the environments with Gymnasium, PettingZoo and OpenSpiel (run by ``import dnb_env``).

Each ecosystem is optional: one that is not installed is skipped. Gymnasium 1.x does not load plugins
by itself, so ``import dnb_env`` first, or name the module in the id: ``gym.make("dnb_env:DotsAndBoxes-5x5-v0")``.

========================  ==========================================================================
Gymnasium                 ``DotsAndBoxes-{R}x{C}-v0`` for 1 <= R, C <= 12; ``DotsAndBoxes-v0`` with
                          ``rows=``, ``cols=``. An id without its version (``DotsAndBoxes-5x5``)
                          is Gymnasium's name for the latest version: it makes that one, with
                          Gymnasium's warning "Using the latest versioned environment".
                          ``gym.make_vec(id, vectorization_mode="vector_entry_point")``: the native
                          batched env
PettingZoo                ``dots_and_boxes_v0`` (AEC and parallel)
OpenSpiel                 ``python_dots_and_boxes``
========================  ==========================================================================

Version history of the Gymnasium ids (their ``-vN``; the PettingZoo id carries its own ``_v0``):

* v0: first registered version: rules, observations, rewards as of release 0.5.0.
"""

from __future__ import annotations

MAX_REGISTERED = 12
#: The version of the Gymnasium ids (the version history above).
GYM_VERSION = 0


def register_gymnasium() -> bool:
    try:
        import gymnasium
    except ImportError:
        return False
    registered = gymnasium.envs.registry
    # the entry points are the classes of dnb_env.gym_env with the registry's agent names as opponent= (dnb_env
    # knows no names; registry.envs gives them)
    kw = dict(entry_point="registry.envs:DotsAndBoxesEnv", vector_entry_point="registry.envs:DotsAndBoxesVectorEnv")
    if f"DotsAndBoxes-v{GYM_VERSION}" not in registered:
        gymnasium.register(id=f"DotsAndBoxes-v{GYM_VERSION}", **kw)
    for r in range(1, MAX_REGISTERED + 1):
        for c in range(1, MAX_REGISTERED + 1):
            env_id = f"DotsAndBoxes-{r}x{c}-v{GYM_VERSION}"
            if env_id not in registered:
                gymnasium.register(id=env_id, kwargs={"rows": r, "cols": c}, **kw)
    return True


def register_pettingzoo() -> bool:
    try:
        import pettingzoo
        from pettingzoo.env_registry.registration import aec_registry
    except ImportError:
        return False
    if "dots_and_boxes_v0" not in aec_registry:
        pettingzoo.register("aec", "dots_and_boxes_v0", entry_point="dnb_env.pettingzoo_env:env")
        pettingzoo.register("parallel", "dots_and_boxes_v0", entry_point="dnb_env.pettingzoo_env:parallel_env")
    return True


def register_openspiel() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    from dnb_env.openspiel_game import register

    register()
    return True


def register_all() -> dict[str, bool]:
    return {
        "gymnasium": register_gymnasium(),
        "pettingzoo": register_pettingzoo(),
        "openspiel": register_openspiel(),
    }
