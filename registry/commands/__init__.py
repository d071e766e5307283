"""The ``dnb`` command's subcommands, one module each: its ``add_parser(sub)`` adds its subparser, whose ``func``
default is its ``run(args)``; :mod:`registry.cli` assembles them, with ``dnb serve``, the one command that starts
the web app, which it holds itself. :mod:`registry.commands.parsing` has the parser pieces they share and
:mod:`registry.commands.errors` turns an exception into the one line the user reads.
"""
