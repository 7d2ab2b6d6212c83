"""The command line reference page, rendered from the parser itself (``metaeval.cli.build_parser()``): every command
and sub-command with its full usage, description and options, group by group, as the parser's ``--help`` has them.

Light: the standard library only (the parser builds without the numeric stack)."""
from __future__ import annotations

import argparse
import html
from collections.abc import Iterator

__all__ = ["command_parsers", "render_markdown"]

INTRO = """# Command line

Every command of `python -m metaeval` (also `.venv/bin/python -m metaeval`), generated from the parser when the
site is built, so it is always the parser's own word: the same usage, options and help as `--help` prints.
How to use them: the [how-to guides](../guide/command-line.md); what they compute: the explanation pages and
[the conventions](../conventions.md). `manage.py` commands and `make` targets: [Commands](commands.md).
"""


def command_parsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """Every command and sub-command below ``parser``, depth first in the parser's order, as ``(name, parser,
    one-line help)``; ``name`` is the words after the program (``score``, ``power hj``)."""

    def walk(current: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
        for action in current._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                full = f"{prefix} {name}".strip()
                yield full, sub, helps.get(name, "")
                yield from walk(sub, full)

    yield from walk(parser, "")


def _full_usage(parser: argparse.ArgumentParser) -> str:
    """argparse's own usage with every option (the project's parser prints a short one on errors)."""
    formatter = parser._get_formatter()
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    """Text for a Markdown table cell: HTML-escaped, pipes and line breaks made harmless."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "&#124;").replace("*", "&#42;") \
        .replace("_", "&#95;").replace("`", "&#96;")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        return f"`{name}`"
    metavar = ""
    if action.nargs != 0:
        if isinstance(action.metavar, str):
            metavar = f" {action.metavar}"
        elif action.choices is not None:
            metavar = " {" + ",".join(str(choice) for choice in action.choices) + "}"
        else:
            metavar = f" {action.dest.upper()}"
        if action.nargs in ("*", "+"):
            metavar += " ..."
    return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""  # %(default)s and friends
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if action.choices is not None and isinstance(action.metavar, str):  # choices hidden behind a metavar
        notes.append("one of " + ", ".join(str(choice) for choice in action.choices))
    return _cell(text) + (f" ({'; '.join(notes)})" if notes else "")


def _command(name: str, parser: argparse.ArgumentParser, summary: str) -> list[str]:
    lines = [f"## {name}", ""]
    description = parser.description or summary
    if description:
        lines += [html.escape(description, quote=False), ""]
    lines += ["```text", _full_usage(parser), "```", ""]
    for group in parser._action_groups:
        actions = [action for action in group._group_actions if action.help != argparse.SUPPRESS
                   and not isinstance(action, argparse._SubParsersAction)]
        if not actions:
            continue
        lines += [f"**{html.escape(group.title or 'options', quote=False)}**", ""]
        if group.description:
            lines += [html.escape(group.description, quote=False), ""]
        lines += ["| argument | meaning |", "|---|---|"]
        lines += [f"| {_flags(action)} | {_help(parser, action)} |" for action in actions]
        lines.append("")
    subcommands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    for action in subcommands:
        lines += ["Sub-commands: " + ", ".join(f"[`{name} {sub}`](#{_anchor(f'{name} {sub}')})"
                                               for sub in action.choices), ""]
    return lines


def _anchor(name: str) -> str:
    """The heading id MkDocs' toc extension gives ``## name`` (lower case, spaces to dashes)."""
    return "-".join(name.lower().split())


def render_markdown(parser: argparse.ArgumentParser) -> str:
    """The whole page: an index of the commands, then one section per command and sub-command."""
    commands = list(command_parsers(parser))
    lines = [INTRO, "| command | what it does |", "|---|---|"]
    lines += [f"| [`{name}`](#{_anchor(name)}) | {_cell(summary)} |" for name, _sub, summary in commands]
    lines.append("")
    for name, sub, summary in commands:
        lines += _command(name, sub, summary)
    return "\n".join(lines) + "\n"
