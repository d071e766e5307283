"""What the ``dnb`` parsers are built from: the parser and help formatter classes, ``--version`` and the
``--backend``/``--ray-address`` pair of the commands that can run on Ray."""

from __future__ import annotations

import argparse


def backend_options(parser: argparse.ArgumentParser, ray_help: str) -> None:
    """``--backend`` (``ray_help`` says what runs on Ray) and ``--ray-address``."""
    parser.add_argument("--backend", choices=["local", "ray"], default="local",
                        help=f"local: processes on this machine; ray: {ray_help} (pip install 'dnb-env[ray]')")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --backend ray: auto (the cluster this machine joined with `ray start`) or "
                             "HOST:PORT of the head; default: start a local Ray instance for the run")


def version() -> str:
    """The installed distribution's version (``importlib.metadata``), else ``dnb_env.__version__`` (a source
    tree that was never installed)."""
    from importlib import metadata

    try:
        return metadata.version("dnb-env")
    except metadata.PackageNotFoundError:
        import dnb_env

        return dnb_env.__version__


class Version(argparse.Action):
    """``--version``: the version looked up only when asked for."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose ``epilog`` may be a function, called when the help is shown: ``dnb train``'s
    list of settings imports the model families (PyTorch), which the other commands must not need."""

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


class Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows each option's default, where it has one."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)
