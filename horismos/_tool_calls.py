"""A tool called and its result gated: arguments resolved and typed, the binding invoked
(retries, timeouts, an outcome left unknown), the result judged by the SHACL gate.

A part of the runner (:mod:`._runner_state`) below the action step, which decides whether a
call is made at all; this part only makes it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._attempt import Attempt
from ._bindings import Binding, resolve
from ._errors import (
    ArgumentTypeError,
    Divergence,
    GateRejected,
    NotSent,
    OutcomeUnknown,
    PreconditionError,
    ShaclMessage,
    ShapesBrokenAlready,
    ToolError,
    ToolTimeout,
)
from ._literals import INTEGER_TYPES, well_formed
from ._model import ActionStep, Arg, Tool
from ._outcomes import Expired, message_of
from ._records import StepRecord
from ._step_records import IS_TYPE, StepRecording
from ._terms import is_iri, unfit_terms

__all__ = ["ToolCalls", "literal_fits", "python_value"]


class ToolCalls(StepRecording):
    """Calling a step's tool: its binding, arguments, the call and the gate's verdict."""

    def binding(self, tool: Tool) -> Binding:
        b = self._bindings.get(tool.iri)
        if b is None:
            b = self._bindings[tool.iri] = resolve(tool, self.registry, self.mcp)
        return b

    def _arguments(
        self,
        step: ActionStep,
        tool: Tool,
        solutions: list[dict[str, Node]],
    ) -> list[dict[str, Node]]:
        calls: list[dict[str, Node]] = []
        seen: set[tuple] = set()
        # two solutions that differ only in what the tool is not sent (a horis:sent false
        # argument its own precondition reads) are one call: the same payload on the same
        # subject, which a tool that is not idempotent would carry out twice
        acting: set[str] = set()
        if len(solutions) > 1:
            subject = tool.effect.subject if tool.effect else None
            acting = {a.name for a in tool.args if a.sent or a.name == subject}
        for sol in solutions:
            args: dict[str, Node] = {}
            for arg in tool.args:
                value = sol.get(step.var_for(arg.name))
                if value is None:
                    if arg.optional:
                        continue
                    raise PreconditionError(
                        f'argument "{arg.name}" of {tool.name} is not bound: the step\'s '
                        f"patterns give no ?{step.var_for(arg.name)}",
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
                args[arg.name] = value
            if len(solutions) > 1:  # one solution is one call: nothing to tell apart
                key = tuple(sorted((k, v) for k, v in args.items() if k in acting))
                if key in seen:
                    continue
                seen.add(key)
            calls.append(args)
        if len(calls) > 1 and not step.for_each:
            shown = "; ".join(
                ", ".join(f"{k}={self.defs.name(v)}" for k, v in c.items()) for c in calls[:3]
            )
            raise PreconditionError(
                f"{len(calls)} solutions for the arguments of {tool.name} ({shown}"
                f"{'; …' if len(calls) > 3 else ''}); narrow horis:requires to one, or declare "
                "horis:forEach true to fire once per solution",
                step=str(step.iri),
                tool=str(tool.iri),
            )
        for args in calls:
            for arg in tool.args:  # the order args were bound in: the first misfit is named
                value = args.get(arg.name)
                if value is not None:
                    self._check_type(step, tool, arg, value)
        return calls

    def _check_type(self, step: ActionStep, tool: Tool, arg: Arg, value: Node) -> None:
        name = arg.name
        if arg.is_class:
            ok = isinstance(value, URIRef) and bool(
                self._types_of(value) & self.defs.classes_of(arg.type)
            )
        else:
            ok = isinstance(value, Literal) and literal_fits(value, arg.type)
        if not ok:  # the type's name is looked up only for the message: it is slow per step
            kind = "a node of class" if arg.is_class else "a literal of datatype"
            what = f"{kind} {self.defs.name(arg.type)}"
            raise ArgumentTypeError(
                f'argument "{name}" of {tool.name} must be {what}; the graph gives {value.n3()}',
                arg=name,
                value=value.n3(),
                expected=str(arg.type),
                step=str(step.iri),
                tool=str(tool.iri),
            )

    async def _invoke_and_gate(
        self,
        rec: StepRecord,
        step: ActionStep,
        tool: Tool,
        calls: list[dict[str, Node]],
        now: Literal,
    ) -> tuple[list[tuple[Node, Node, Node]], Literal]:
        effects: list[tuple[Node, Node, Node]] = []
        subject_arg = tool.effect.subject if tool.effect else None
        for args in calls:
            # horis:sent false: the runtime read it from the graph (the effect's subject, say);
            # the binding never gets it, whatever its kind
            py_args = {
                a.name: python_value(args[a.name]) for a in tool.args if a.sent and a.name in args
            }
            t2 = time.perf_counter()
            try:
                result = await self._call(rec, step, tool, py_args)
            finally:  # a call that raised or timed out took its time too: a reviewer reads
                t3 = time.perf_counter()  # 5 s waited for a tool, not a 0.7 ms step
                rec.timings["tool"] = rec.timings.get("tool", 0.0) + t3 - t2
            rec.result.append(result)
            if result is not None and type(result) is not dict and not isinstance(result, Mapping):
                raise ToolError(
                    f"{tool.name} returned {type(result).__name__}; a tool returns a mapping "
                    "from declared property to value, or None",
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            subject = args[subject_arg] if subject_arg else None
            if subject is None:
                if result:
                    raise GateRejected(
                        f"{tool.name} declares no horis:effect but returned a result",
                        messages=(),
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
                continue
            result, malformed = well_formed(
                tool, result, subject, self.defs.name, self.gate.declared_types(tool)
            )
            if malformed:  # bytes, NUL, NaN as a decimal, a set in a value: never a literal
                raise _result_rejected(tool, step, "holds values RDF cannot carry", malformed)
            returned = self.gate.triples(tool, subject, result)
            unfit = unfit_terms(returned)  # no store could hold them: this step's rejection
            if unfit:
                raise _result_rejected(tool, step, "cannot be written", unfit)
            fixed = self.gate.fixed(tool, subject, now)
            # with horis:forEach, earlier calls' effects on this node are part of its after-view
            before = [
                *self._judged(tool, subject, [*returned, *fixed, *effects]),
                *(t for t in effects if t[0] == subject),
            ]
            verdict = self.gate.judge(
                tool, subject, returned, fixed, before, self._types_of, self.store
            )
            rec.timings["gate"] = rec.timings.get("gate", 0.0) + time.perf_counter() - t3
            if not verdict.conforms:
                shapes = verdict.against == "shapes" and self.names_shapes
                broke = "the domain shapes" if shapes else "its declared effect"
                raise _result_rejected(tool, step, f"breaks {broke}", verdict.messages)
            rec.messages = verdict.messages
            effects.extend(returned)
            effects.extend(fixed)
        return effects, now

    def _broken_already(
        self, step: ActionStep, tool: Tool, calls: list[dict[str, Node]]
    ) -> ShapesBrokenAlready | None:
        """Why no result of ``tool`` can land, said before it is called: the subject of one of
        its calls breaks a domain shape already, in a way values added cannot mend
        (:meth:`Gate.broken_already`: a legacy value the pattern refuses, one value too many).
        Asked of a tool that is not idempotent: its call acts once, and a result the gate then
        rejected left the act done, nothing of it in the world, and the call in doubt."""
        subject_arg = tool.effect.subject if tool.effect is not None else None
        if subject_arg is None:
            return None
        for subject in dict.fromkeys(args[subject_arg] for args in calls if subject_arg in args):
            broken = self.gate.broken_already(
                tool, subject, self._judged(tool, subject, []), self._types_of, self.store
            )
            if broken:
                said = "; ".join(f"{m} (value: {m.value})" if m.value else str(m) for m in broken)
                return ShapesBrokenAlready(
                    f"{self.defs.name(subject)} already breaks the domain shapes, so "
                    f"{tool.name} is not called: no result of it can mend that (a result only "
                    f"adds values): {said} — correct the world's data, then run again",
                    broken=broken,
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
        return None

    def _judged(
        self, tool: Tool, subject: Node, added: list[tuple[Node, Node, Node]]
    ) -> list[tuple[Node, Node, Node]]:
        """The subject's triples the gate judges it by: those whose predicate a shape that
        judges it names (:meth:`Gate.reads`), not everything it holds. Read for its class as
        declared, then, should its types (with any the step adds) call for more, the rest."""
        guess = self.gate.first_reads(tool)
        if guess is not None:
            found = list(self.store.outgoing(subject, guess))
            types = {o for _, p, o in found if IS_TYPE(p)}
            types.update(o for s, p, o in added if IS_TYPE(p) and (s is subject or s == subject))
            need = self.gate.reads(tool, subject, types)
            if need is not None:
                if not need <= guess:
                    found += self.store.outgoing(subject, need - guess)
                return found
        return list(self.store.outgoing(subject))  # a shape may read any of its triples

    async def _call(
        self, rec: StepRecord, step: ActionStep, tool: Tool, args: dict[str, Any]
    ) -> Any:
        """Call the tool, retrying up to ``horis:retries`` times; a tool that is not idempotent
        only while its calls provably never reached it (see _attempt)."""
        attempts = 1 + tool.retries
        last: ToolError | None = None
        for _ in range(attempts):
            rec.attempts += 1
            deadline = None
            with Attempt() as attempt:
                try:
                    if not tool.idempotent and not self.store.fence_holds():
                        raise NotSent(
                            f"{tool.name} was not sent: this process's lease on the shared "
                            "store ran out before the call went out (the process was paused, "
                            "or could not reach the store), so another may have taken its "
                            "work over and settled the call it announced; it did not act",
                            step=str(step.iri),
                            tool=str(tool.iri),
                        )
                    if tool.inline:  # never awaits: its binding judges the timeout (_bindings)
                        return await self.env._invoke(tool, lambda: self.binding(tool), args)
                    # in this task, not a new one as wait_for makes: ~90 µs a call on a busy
                    # machine, for every step. Held off while the binding opens (an MCP
                    # server starting again): see Binding.open
                    async with asyncio.timeout(tool.timeout) as deadline:
                        return await self.env._invoke(
                            tool, lambda: self.binding(tool), args, deadline
                        )
                except TimeoutError as e:
                    if isinstance(e, Expired) or (deadline is not None and deadline.expired()):
                        within = f"within {tool.timeout:g}s (horis:timeout)"
                        last = ToolTimeout(
                            f"{tool.name} did not answer {within}"
                            if attempt.sent  # else its binding had not got the call out yet
                            else f"{tool.name} was not sent {within}: it never left (for an "
                            "HTTP or MCP tool: no connection was made), so it did not act",
                            step=str(step.iri),
                            tool=str(tool.iri),
                        )
                        last.sent = attempt.sent
                    else:  # the tool's own: a request of its that timed out, say
                        last = ToolError(
                            f"{tool.name} raised TimeoutError: {e}",
                            step=str(step.iri),
                            tool=str(tool.iri),
                        )
                except ToolError as e:
                    e.step, e.tool = str(step.iri), str(tool.iri)
                    last = e
                except Divergence:  # replay's verdict on a call it made again, not the
                    raise  # tool's failure: taken for one, the call was retried, and the
                    # divergence said the run now made two calls where it made one
                except Exception as e:
                    last = ToolError(
                        f"{tool.name} raised {type(e).__name__}: {message_of(e)}",
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
                    # the tool's own exception, its traceback with it: a service logging the
                    # run's error saw the message only, never which line of its tool failed
                    last.__cause__ = e
            # never sent, or sent and no answer came back: an idempotent call's key stays free
            last.unanswered = isinstance(last, NotSent) or not attempt.answered
            if getattr(last, "terminal", False):  # a quota breach, a full disk: not retried
                break
            if not tool.idempotent and attempt.sent and not isinstance(last, NotSent):
                if not attempt.answered:
                    last = _unknown(tool, step, last, attempt.running)
                break  # it may have acted: never sent again
        assert last is not None
        raise last


def _result_rejected(
    tool: Tool, step: ActionStep, why: str, messages: Sequence[ShaclMessage]
) -> GateRejected:
    """The rejection of ``tool``'s result at ``step``: what is wrong with it, then each
    message (values RDF cannot carry, terms no store holds, the shapes it breaks)."""
    return GateRejected(
        f"the result of {tool.name} {why}: " + "; ".join(str(m) for m in messages),
        messages=messages,
        step=str(step.iri),
        tool=str(tool.iri),
    )


def _unknown(
    tool: Tool, step: ActionStep, seen: ToolError, running: threading.Event | None = None
) -> OutcomeUnknown:
    """A non-idempotent call that was sent and never answered: it may have acted (and, in a
    thread of this process, may go on acting until ``running`` is set)."""
    retried = " (horis:retries repeats only calls that never reached it)" if tool.retries else ""
    return OutcomeUnknown(
        f"{seen} — the call was sent and no answer came back, so it may have acted; "
        f"{tool.name} is not idempotent, so it is not called again{retried}: check with the "
        "system it acts on whether the call took effect, and record the outcome in the world "
        "(horis:onError is where the workflow goes on from)",
        cause=seen,
        running=None if running is None or running.is_set() else running,
        step=str(step.iri),
        tool=str(tool.iri),
    )


def python_value(value: Node) -> Any:
    """An argument as a Python tool receives it: a node as its IRI, a literal as its value."""
    if is_iri(value):
        return value
    return cast(Literal, value).toPython()


def literal_fits(value: Literal, datatype: URIRef) -> bool:
    if datatype == _ANY_LITERAL:
        return True
    if getattr(value, "ill_typed", False):
        return False
    dt_ = value.datatype
    if dt_ is None:
        if value.language:
            return datatype == _LANG_STRING
        return datatype == _STRING
    if dt_ == datatype:
        return True
    return datatype in _NUMBERS and dt_ in INTEGER_TYPES


# rdflib answers XSD.x and the like through a metaclass __getattr__ on each use
_ANY_LITERAL, _LANG_STRING, _STRING = RDFS.Literal, RDF.langString, XSD.string
_NUMBERS = (XSD.integer, XSD.decimal)
