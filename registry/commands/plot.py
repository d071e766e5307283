"""``dnb plot``: pictures (``dnb plot attention``)."""

from __future__ import annotations

import argparse

from registry.commands.parsing import Parser


def run_attention(args: argparse.Namespace) -> int:
    """``dnb plot attention``: :func:`agents.models.attention_plot.main` on the rest of the command line
    (its options, usage and errors under this command's name; torch is imported only here)."""
    from agents.models.attention_plot import main

    return main(args.rest, prog="dnb plot attention")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb plot`` subcommand's options."""
    pl = sub.add_parser("plot", help="pictures: `dnb plot attention --checkpoint PATH --moves 0,5 --out att.png`")
    pictures = pl.add_subparsers(dest="what", required=True, parser_class=Parser)
    at = pictures.add_parser("attention", add_help=False,
                             help="Dotsformer's attention maps over a board (Dotsformer Figure 10); "
                                  "`dnb plot attention --help` for its options")
    at.set_defaults(func=run_attention, parser=at, takes_rest=True)
