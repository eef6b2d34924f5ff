"""Completion scripts for bash, zsh and fish (`pasture completion SHELL`): the verbs, their
sub-verbs and each one's options, read from the command line's own parser, so a verb
added there is completed with nothing more to write. Anything else (a folder to deploy,
a file to back up to) is left to the shell's own file completion.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from pasture.errors import UsageError

SHELLS = ("bash", "zsh", "fish")
# options before the verb that take a value: the word after them is no verb
_VALUED = ("--home", "--database")


@dataclass
class _Verb:
    subs: list[str] = field(default_factory=list)
    options: dict[str, list[str]] = field(default_factory=dict)  # by sub-verb ("" alone)


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(
        o
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction) and a.help != argparse.SUPPRESS
        for o in a.option_strings
        if o.startswith("--")
    )


def _verbs(parser: argparse.ArgumentParser) -> dict[str, _Verb]:
    """Each verb of `parser`: its sub-verbs and the options of each."""
    found: dict[str, _Verb] = {}
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        parsers = action._name_parser_map  # each made as it is looked up
        for name in list(parsers):
            verb = found.setdefault(name, _Verb())
            top = parsers[name]
            verb.options[""] = _options(top)
            for inner in top._actions:
                if isinstance(inner, argparse._SubParsersAction):
                    for sub in list(inner._name_parser_map):
                        verb.subs.append(sub)
                        verb.options[sub] = _options(inner._name_parser_map[sub])
    return found


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for `shell`, of the command line `parser` reads; a UsageError
    naming the shells there are."""
    if shell not in SHELLS:
        raise UsageError(f"no completion for {shell} — say bash, zsh or fish")
    verbs = _verbs(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](verbs, _options(parser))


def _cases(verbs: dict[str, _Verb], indent: str) -> tuple[str, str]:
    """Shell `case` arms: a verb's sub-verbs; the options of `verb` or `verb sub`."""
    subs = "".join(
        f'{indent}{name}) subs="{" ".join(v.subs)}" ;;\n' for name, v in verbs.items() if v.subs
    )
    opts = "".join(
        f'{indent}"{name}{" " + sub if sub else ""}") opts="{" ".join(options)}" ;;\n'
        for name, v in verbs.items()
        for sub, options in v.options.items()
    )
    return subs, opts


def _bash(verbs: dict[str, _Verb], top: list[str]) -> str:
    subs, opts = _cases(verbs, "        ")
    valued = "|".join(_VALUED)
    return f"""# pasture's completion for bash: source it, or keep it as
# ~/.local/share/bash-completion/completions/pasture
_pasture() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} verb="" sub="" subs="" opts="" i=1
    while (( i < COMP_CWORD )); do
        case ${{COMP_WORDS[i]}} in
            {valued}) (( i += 2 )); continue ;;
            -*) ;;
            *) verb=${{COMP_WORDS[i]}}; break ;;
        esac
        (( i++ ))
    done
    if [[ -z $verb ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=( $(compgen -W "{" ".join(top)}" -- "$cur") )
        else
            COMPREPLY=( $(compgen -W "{" ".join(verbs)}" -- "$cur") )
        fi
        return
    fi
    case $verb in
{subs}    esac
    if [[ -n $subs ]] && (( COMP_CWORD == i + 1 )) && [[ $cur != -* ]]; then
        COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
        return
    fi
    [[ -n $subs ]] && (( COMP_CWORD > i + 1 )) && sub=${{COMP_WORDS[i+1]}}
    if [[ $cur == -* ]]; then
        case "$verb${{sub:+ $sub}}" in
{opts}        esac
        COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
    fi
}}
complete -o default -F _pasture pasture
"""


def _zsh(verbs: dict[str, _Verb], top: list[str]) -> str:
    subs, opts = _cases(verbs, "        ")
    valued = "|".join(_VALUED)
    return f"""#compdef pasture
# pasture's completion for zsh: keep it as _pasture in a folder on $fpath, or source it
# after compinit
_pasture() {{
    local verb="" sub="" subs="" opts="" i=2
    while (( i < CURRENT )); do
        case ${{words[i]}} in
            {valued}) (( i += 2 )); continue ;;
            -*) ;;
            *) verb=${{words[i]}}; break ;;
        esac
        (( i++ ))
    done
    if [[ -z $verb ]]; then
        if [[ $PREFIX == -* ]]; then
            compadd -- {" ".join(top)}
        else
            compadd -- {" ".join(verbs)}
        fi
        return
    fi
    case $verb in
{subs}    esac
    if [[ -n $subs ]] && (( CURRENT == i + 1 )) && [[ $PREFIX != -* ]]; then
        compadd -- ${{=subs}}
        return
    fi
    [[ -n $subs ]] && (( CURRENT > i + 1 )) && sub=${{words[i+1]}}
    if [[ $PREFIX == -* ]]; then
        case "$verb${{sub:+ $sub}}" in
{opts}        esac
        compadd -- ${{=opts}}
        return
    fi
    _files
}}
if (( $+functions[compdef] )); then
    compdef _pasture pasture
fi
"""


def _fish(verbs: dict[str, _Verb], top: list[str]) -> str:
    names = " ".join(verbs)
    lines = [
        "# pasture's completion for fish: keep it as ~/.config/fish/completions/pasture.fish",
        f'complete -c pasture -n "not __fish_seen_subcommand_from {names}" -f -a "{names}"',
    ]
    lines += [
        f'complete -c pasture -n "not __fish_seen_subcommand_from {names}" -l {o[2:]}' for o in top
    ]
    for name, verb in verbs.items():
        if verb.subs:
            subs = " ".join(verb.subs)
            lines.append(
                f'complete -c pasture -n "__fish_seen_subcommand_from {name}; and not '
                f'__fish_seen_subcommand_from {subs}" -f -a "{subs}"'
            )
        for sub, options in verb.options.items():
            seen = f"__fish_seen_subcommand_from {name}"
            if sub:
                seen += f"; and __fish_seen_subcommand_from {sub}"
            lines += [f'complete -c pasture -n "{seen}" -l {o[2:]}' for o in options]
    return "\n".join(lines) + "\n"


__all__ = ["SHELLS", "script"]
