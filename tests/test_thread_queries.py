"""A prepared SPARQL query is evaluated by one thread at a time.

rdflib writes the row it is evaluating onto the query's expressions, so one prepared query
asked by two threads at once gave each thread the other's rows: a memory store's select, a
precondition and the gate's SPARQL shapes (asked through ``PreparingGraph``) from
``serve``'s or a catalog's threads. Each test asks the same text from two threads with
different bindings and checks every answer."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from rdflib import Literal, Namespace

from horismos._preconditions import compile_patterns
from horismos._sparql_parse import PreparingGraph, thread_query
from horismos._stores.memory import MemoryStore

EX = Namespace("http://ex/")
NS = {"ex": str(EX)}
ROWS = 600
FILTERED = "?s ex:v ?v . FILTER(?v > ?lim && STRSTARTS(STR(?s), \"http://ex/\"))"


def _both_right(
    count: Callable[[int], int], rounds: int = 8, per_request: bool = False
) -> list[str]:
    """Two threads each counting rows above their own limit, ``rounds`` times: what was wrong.
    ``per_request``: each round two new threads counting once, which then end (a server
    starting a thread per request)."""
    wrong: list[str] = []

    def work(lim: int, times: int) -> None:
        for _ in range(times):
            try:
                got = count(lim)
            except Exception as e:  # a row another thread cleared under it
                wrong.append(repr(e))
                continue
            if got != ROWS - 1 - lim:
                wrong.append(f"limit {lim}: {got} rows, not {ROWS - 1 - lim}")

    batches = [[(50, 1), (450, 1)]] * rounds if per_request else [[(50, rounds), (450, rounds)]]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the threads take turns within a query, not between them
    try:
        for batch in batches:
            threads = [threading.Thread(target=work, args=args) for args in batch]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(interval)
    return wrong


def _memory_store() -> MemoryStore:
    """The store that evaluates queries with rdflib (the others hand them to Oxigraph)."""
    store = MemoryStore()
    store.load([(EX[f"s{i}"], EX.v, Literal(i), None) for i in range(ROWS)])
    return store


def test_the_gates_pyshacl_queries_from_two_threads_each_get_their_own_rows() -> None:
    graph = PreparingGraph()
    for i in range(ROWS):
        graph.add((EX[f"s{i}"], EX.v, Literal(i)))
    text = f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ {FILTERED} }}"

    def count(lim: int) -> int:
        return len(list(graph.query(text, initBindings={"lim": Literal(lim)})))

    assert _both_right(count) == []


def test_a_memory_stores_select_from_two_threads_gets_each_its_own_rows() -> None:
    store = _memory_store()
    text = f"SELECT ?s WHERE {{ {FILTERED} }}"

    def count(lim: int) -> int:
        return len(store.select(text, {"lim": Literal(lim)}, NS))

    assert _both_right(count) == []


def test_a_precondition_asked_from_two_threads_gets_each_its_own_rows() -> None:
    store = _memory_store()
    pre = compile_patterns([FILTERED], NS)

    def count(lim: int) -> int:
        return len(store.solutions(pre, {"lim": Literal(lim)}))

    assert _both_right(count) == []


def _in_a_thread(work: Callable[[], object]) -> object:
    """``work()`` on a thread of its own, which has ended when this returns."""
    got: list[object] = []
    thread = threading.Thread(target=lambda: got.append(work()))
    thread.start()
    thread.join()
    return got[0]


def test_a_thread_started_after_another_ended_takes_over_its_prepared_query() -> None:
    # a server starting a thread per request parsed every text again on every request
    text = f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ {FILTERED} }} # handed on"
    first = _in_a_thread(lambda: thread_query(text, ()))
    assert _in_a_thread(lambda: thread_query(text, ())) is first


def test_a_prepared_query_is_not_handed_to_another_thread_while_its_own_lives() -> None:
    text = f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ {FILTERED} }} # kept"
    asked, done = threading.Event(), threading.Event()
    held: list[object] = []

    def holder() -> None:
        held.append(thread_query(text, ()))
        asked.set()
        done.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        asked.wait()
        assert _in_a_thread(lambda: thread_query(text, ())) is not held[0]
    finally:
        done.set()
        thread.join()


def test_threads_started_per_request_each_get_their_own_rows() -> None:
    store = _memory_store()
    text = f"SELECT ?s WHERE {{ {FILTERED} }}"

    def count(lim: int) -> int:
        return len(store.select(text, {"lim": Literal(lim)}, NS))

    assert _both_right(count, per_request=True) == []
