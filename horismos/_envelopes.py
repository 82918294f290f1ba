"""The JSON documents the catalog hands to other programs, as pydantic models.

``horismos tools inventory`` writes an inventory that CI keeps in the repository and other
programs read; ``horismos tools call --format json`` answers with a call envelope. Their shape
is a contract, so it is declared once here: :func:`inventory_schema` and
:func:`envelope_schema` are the JSON Schemas published in ``docs/`` (a test keeps them equal),
and an inventory read back (``tools inventory --check``) is validated against the model, each
problem named by its place in the file.

What stays hand-built, on purpose: a tool's ``input_schema`` and ``effect_schema``. They are
derived per tool from its Turtle declaration (``horis:takes``, ``horis:effect``), not from a
Python class, so a pydantic model would have to be generated from RDF first only to be turned
back into the same JSON Schema; here they are opaque JSON objects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "SCHEMA_FILES",
    "CallEnvelope",
    "Inventory",
    "InventoryProblem",
    "envelope_schema",
    "inventory_schema",
    "read_inventory",
    "schema_text",
    "write_schemas",
]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Dependencies(_Closed):
    """What a tool needs from outside: its binding (without credentials), its MCP server, the
    environment variables it reads and the hosts it reaches."""

    binding: str
    mcp_server: str | None
    env: list[str]
    hosts: list[str]


class InventoryTool(_Closed):
    """One tool in an inventory: the static catalog entry, without readiness."""

    name: str
    iri: str
    label: str | None
    description: str | None
    input_schema: dict[str, Any] = Field(description="JSON Schema derived from horis:takes")
    effect_schema: dict[str, Any] | None = Field(
        description="JSON Schema of the fields the tool may return, from horis:effect"
    )
    lane: Literal["python", "mcp", "http", "command"]
    side_effect: str
    requires_approval: bool
    dependencies: Dependencies


class Inventory(_Closed):
    """``horismos tools inventory``: every declared tool, with a digest of the list."""

    inventory_version: int
    digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    tools: list[InventoryTool]


class ContentBlock(_Closed):
    type: Literal["text", "json"]
    text: str | None = None
    json_: Any = Field(default=None, alias="json")


class GateVerdict(_Closed):
    conforms: bool
    messages: list[dict[str, Any]]


class CallError(_Closed):
    kind: str = Field(
        description="refused before any call: schema, argument_type, "
        "precondition, policy, approval, approval_used, env, binding; after: the RunError's "
        "kind, e.g. tool_error, timeout, gate_rejected, result_too_large"
    )
    message: str


class CallEnvelope(_Closed):
    """``horismos tools call --format json`` and ``CallResult.to_json()``."""

    status: Literal["completed", "refused", "blocked", "failed", "rejected", "timed_out", "partial"]
    content: list[ContentBlock]
    artifacts: list[dict[str, Any]]
    effects: list[tuple[str, str, str]] = Field(
        description="the triples that landed, each term in N-Triples form"
    )
    gate: GateVerdict | None
    error: CallError | None


def inventory_schema() -> dict[str, Any]:
    """The JSON Schema of ``tools list --json``, made from its model."""
    return _schema(Inventory)


def envelope_schema() -> dict[str, Any]:
    """The JSON Schema of ``tools call``'s answer, made from its model."""
    return _schema(CallEnvelope)


SCHEMA_FILES = {
    "inventory.schema.json": inventory_schema,
    "call-envelope.schema.json": envelope_schema,
}
"""The schemas as published in ``docs/``; regenerate them with :func:`write_schemas`."""


def write_schemas(folder: str | Path) -> None:
    """Write each published schema into ``folder`` (``python -c "from horismos._envelopes
    import write_schemas; write_schemas('docs')"``)."""
    for name, make in SCHEMA_FILES.items():
        (Path(folder) / name).write_text(schema_text(make()), encoding="utf-8")


def schema_text(schema: dict[str, Any]) -> str:
    """How a schema is written to ``docs/``: stable, so a regenerated file differs only when the
    schema does."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


class InventoryProblem(ValueError):
    """An inventory file that is not an inventory; ``problems`` name each place."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_inventory(data: Any) -> Inventory:
    """``data`` (parsed JSON) as an :class:`Inventory`, or :class:`InventoryProblem`."""
    try:
        return Inventory.model_validate(data)
    except ValidationError as e:
        raise InventoryProblem(
            [
                f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
                for err in e.errors()[:5]
            ]
        ) from None
