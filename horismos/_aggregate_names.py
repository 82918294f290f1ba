"""The names of the aggregates a prepared query's algebra may hold.

rdflib looks an aggregate's accumulator up by its algebra node's name. The ``memory`` store
renames ``MIN``, ``MAX``, ``SUM`` and ``AVG`` so that accumulators of its own answer them
(:mod:`._stores.aggregates`), and the planner that leaves alone a query whose answer depends
on the order of its rows (:mod:`._bound_plan`) must know ``SUM`` and ``AVG`` by either name:
both read the names here, so the one cannot rename what the other no longer recognises.
"""

from __future__ import annotations

__all__ = ["AS_OXIGRAPH", "ROW_ORDERED"]

AS_OXIGRAPH = {
    name: f"{name}_Oxigraph"
    for name in ("Aggregate_Min", "Aggregate_Max", "Aggregate_Sum", "Aggregate_Avg")
}
"""rdflib's name of each aggregate the ``memory`` store answers as Oxigraph does, to the
name it gives its algebra node."""

_ROW_ORDERED_RDFLIB = (
    "Aggregate_Sample",
    "Aggregate_GroupConcat",
    "Aggregate_Sum",
    "Aggregate_Avg",
)

ROW_ORDERED = frozenset(
    {*_ROW_ORDERED_RDFLIB, *(AS_OXIGRAPH[n] for n in _ROW_ORDERED_RDFLIB if n in AS_OXIGRAPH)}
)
"""The aggregates whose answer may change with the order of their group's rows, by either
name: ``SAMPLE`` keeps the first, ``GROUP_CONCAT`` joins them in order, and a float's ``SUM``
(and so ``AVG``) depends on the order it is added in."""
