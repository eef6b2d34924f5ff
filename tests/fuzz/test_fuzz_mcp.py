"""The MCP door under generated hostile input: all nine tools, over the SDK's own client.

Each answer is a result (never an exception out of the client): an `isError`
one is a refusal sentence, never the connector's server-fault sentence; nothing
is logged at ERROR, and a refused call writes nothing (see fuzz_checks).
"""

from __future__ import annotations

from typing import Any

import pytest
from fuzz_checks import FUZZ, CallTool, fresh, tool_answer
from fuzz_inputs import MCP, WILD_ANSWERS, command_names, filters, has_surrogate, nested
from fuzz_site import Site
from hypothesis import given, settings
from hypothesis import strategies as st

apps = st.sampled_from(["runs", "cart", "wild", "ada/runs", "ada/cart", "nope"]) | MCP.values
files_for_mcp = (MCP.app_files | MCP.tools_files).map(
    lambda files: {path: text for path, text in files.items() if not has_surrogate(path)}
)


def _optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=fields)


tool_calls = st.one_of(
    st.tuples(st.just("commands"), _optional(app=apps)),
    st.tuples(
        st.just("command"),
        st.fixed_dictionaries(
            {"name": command_names | MCP.values, "args": MCP.command_args | MCP.values},
            optional={"app": apps},
        ),
    ),
    st.tuples(
        st.just("command"),
        st.fixed_dictionaries(
            {
                "name": st.just("answer"),
                "app": st.just("wild"),
                "args": st.sampled_from(WILD_ANSWERS).map(lambda kind: {"kind": kind}),
            }
        ),
    ),
    st.tuples(st.sampled_from(["status", "app_list"]), st.just({})),
    st.tuples(st.just("graph_schema"), _optional(app=apps)),
    st.tuples(st.just("graph_query"), _optional(app=apps, filter=filters | MCP.values)),
    st.tuples(st.just("graph_apply"), _optional(app=apps, bundles=MCP.bundles)),
    st.tuples(st.just("app_files"), _optional(app=apps, path=MCP.values)),
    st.tuples(st.sampled_from(["nope", "\ud800", "x" * 300]), MCP.command_args),
)

deploys = st.fixed_dictionaries(
    {"files": files_for_mcp | MCP.values, "app": st.sampled_from(["fz", "fz-2"]) | MCP.values},
    optional={
        "space": st.sampled_from(["ada", "nope"]) | MCP.values,
        "access": st.sampled_from(["private", "public", "open", "nope"]) | MCP.values,
        "title": MCP.values,
    },
)


@settings(FUZZ, max_examples=300)
@given(call=tool_calls)
def test_any_tool_call_is_an_answer_or_a_refusal_writing_nothing(
    site: Site,
    call_tool: CallTool,
    caplog: pytest.LogCaptureFixture,
    call: tuple[str, dict[str, Any]],
) -> None:
    name, arguments = call
    before = fresh(site, caplog)
    tool_answer(site, caplog, call_tool(name, arguments), before)


@settings(FUZZ, max_examples=40)
@given(arguments=deploys)
def test_any_app_deploy_installs_or_is_refused_with_every_problem(
    site: Site,
    call_tool: CallTool,
    caplog: pytest.LogCaptureFixture,
    arguments: dict[str, Any],
) -> None:
    if arguments["app"] in ("runs", "cart", "wild"):  # the apps the other doors are fuzzed on
        arguments = {**arguments, "app": "fz"}
    before = fresh(site, caplog)
    tool_answer(site, caplog, call_tool("app_deploy", arguments), before)


@pytest.mark.parametrize(
    ("name", "arguments", "sentence"),
    [
        (
            "graph_query",
            {"app": "runs", "filter": ".jog.miles>1180591620717411303424"},
            "jog.miles is a number between -9223372036854775808 and 9223372036854775807 — "
            "write a larger one as a decimal, like 1.2e21",
        ),
        (
            "command",
            {"name": "log_run", "args": {"who": "Ada", "miles": 2**70, "at": "2026-09-01"}},
            "miles is a number between -9223372036854775808 and 9223372036854775807 — "
            "write a larger one as a decimal, like 1.2e21",
        ),
        (
            "graph_apply",
            {"app": "runs", "bundles": [{"jog": {"who": "\ud800"}}]},
            "bundles holds \\ud800, half of a UTF-16 surrogate pair and not a character — "
            "send text as whole characters",
        ),
        (
            "command",
            {"name": "log_run", "args": {"who": nested(70)}},
            "args nests lists and objects more than 64 deep — pasture reads at most 64 levels",
        ),
        (
            "graph_query",
            {"app": "runs", "filter": ".comment.target" * 200 + ".doc.title~=x"},
            ".comment.target… walks 200 references, and a filter walks at most 4 — like "
            ".comment.target.doc.title~=word, which walks one",
        ),
    ],
)
def test_the_classes_are_refused_with_the_same_sentence_as_on_the_web(
    site: Site,
    call_tool: CallTool,
    caplog: pytest.LogCaptureFixture,
    name: str,
    arguments: dict[str, Any],
    sentence: str,
) -> None:
    before = fresh(site, caplog)
    result = call_tool(name, arguments)
    assert result.is_error
    assert result.content[0].text == sentence  # type: ignore[union-attr]
    tool_answer(site, caplog, result, before)
