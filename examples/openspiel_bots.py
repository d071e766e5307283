"""OpenSpiel's Python MCTSBot against our random agent on the registered game ``python_dots_and_boxes``.

    python examples/openspiel_bots.py --board 3x3 --simulations 200 --games 20
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import evaluate_bots, mcts

import dnb_env  # noqa: F401  (registers python_dots_and_boxes)
from agents.base import agent_to_bot
from baselines.random_agent import RandomAgent
from dnb_env.core import parse_board


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--simulations", type=int, default=200)
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rows, cols = parse_board(args.board)
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": rows, "num_cols": cols})
    rng = np.random.RandomState(args.seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    mcts_bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=args.simulations, evaluator=evaluator,
                            random_state=rng)
    random_bot = agent_to_bot(RandomAgent(seed=args.seed))
    mcts_points = 0.0
    for i in range(args.games):
        bots = [mcts_bot, random_bot] if i % 2 == 0 else [random_bot, mcts_bot]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        mcts_return = returns[0] if i % 2 == 0 else returns[1]
        mcts_points += (mcts_return + 1) / 2  # win 1, draw 0.5, loss 0
    print(f"OpenSpiel MCTSBot ({args.simulations} simulations) vs our random agent on {args.board}: "
          f"score {mcts_points / args.games:.3f} over {args.games} games (seats alternating)")
    return mcts_points / args.games


if __name__ == "__main__":
    main()
