"""Play Dots-and-Boxes in the terminal against any registered agent.

    python examples/play.py --board 3x3 --agent random [--first agent]

Type a move as an action number (``17``) or as ``h r c`` / ``v r c`` (horizontal line in dot row r from
dot column c; vertical line in box row r at dot column c). ``?`` lists your legal moves, ``q`` quits.
Bad input asks again.
"""

from __future__ import annotations

import argparse
import sys

from dnb_env.core import GameState
from registry import list_agents, make_agent


def read_move(state: GameState, ask=input, out=print) -> int | None:
    """Ask until a legal move is typed; None when the player quits."""
    g = state.geometry
    while True:
        try:
            text = ask("your move> ").strip()
        except EOFError:
            return None
        if text.lower() in ("q", "quit", "exit"):
            return None
        if text == "?":
            out(" ".join(f"{a}={g.action_name(a).replace(' ', '')}" for a in state.legal_actions()))
            continue
        try:
            action = g.parse_action(text)
        except ValueError as exc:
            out(str(exc))
            continue
        if not state.is_legal(action):
            out(f"{action} ({g.action_name(action)}) is already drawn; '?' lists the free lines")
            continue
        return action


def main(argv=None, ask=input, out=print) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--agent", default="random", help=f"one of: {', '.join(list_agents())}")
    p.add_argument("--first", choices=["you", "agent"], default="you")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    agent = make_agent(args.agent, board=args.board, seed=args.seed)
    human = 0 if args.first == "you" else 1
    state = GameState.new(args.board)
    out(f"You are player {human}. Moves: number, 'h r c' or 'v r c'; '?' lists them; 'q' quits.")
    while not state.is_terminal():
        out(str(state))
        if state.current_player == human:
            action = read_move(state, ask, out)
            if action is None:
                out("bye")
                return 1
        else:
            action = agent.select_action(state)
            out(f"{agent.name} draws {action} ({state.geometry.action_name(action)})")
        state = state.apply(action)
    out(str(state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
