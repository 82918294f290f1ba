"""World data lent to a persistent store for one command, taken back unless the command kept
it: ``tools call``, ``tools discover`` and ``tools approve --out`` with ``--store S --world F``.

The command reads S with F's facts beside it. What it reads is S's own engine answering —
preconditions and argument types are SPARQL an Oxigraph store or a server over HTTP
evaluates, the gate's shapes read its nodes — and that engine cannot join quads it does not
hold, so F cannot be a view laid over S without copying S. F's quads land in one commit
instead, and a command that keeps nothing of F (a call refused or failed, a discovery, an
approval issued) takes back exactly those it added in one more: the quads S held already
stay. What the command itself records stays (a call left in doubt, an approval used or
issued). A call keeps F once its completed commit has landed, whatever fails after it:
taken back then, F's facts were gone from under the effect that read them. Before, F stayed
in S whatever the call did.

The lend lands with a record of it (:mod:`~._lends`), which the take-back removes, and a
call's completed commit with its effects: a process killed in between left F in S for good,
and the next command opening S for writing now takes it back.

The take-back does not ask who else wrote S since: on a store others write meanwhile
(``sparql:``), a quad another writer committed after the lend that F also held is removed
with F's, and the "every instance has a short id" mark is set again over instances another
writer may have added meanwhile (docs/catalog.md says so).

F is parsed once, and refused before anything lands if it brings an approval record: the
approvals a command on S counts are those S holds, and the record that issues one is a few
triples anyone can write beside their own call (:func:`~._policy.holds_approval_record`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._cli_common import world_data
from ._lends import (
    LEND_ATTEMPTS,
    LENDS,
    Lend,
    Sharing,
    give_back,
    lends_of,
    lent_elsewhere,
)
from ._redact import redact_text
from ._stores import Change, Conflict, StoreError
from ._stores.base import INSTANCES, Quad
from ._world import INDEXED_EVERY_INSTANCE, World, indexes_every_instance

__all__ = ["LentWorld", "end_lend"]


@dataclass
class LentWorld:
    """What one command lent ``world``: the quads it added, whether the store's "every
    instance has a short id" mark was lifted for instances among them, and the record of both
    landed with them (:mod:`~._lends`), by which the next command takes them back should
    this process stop before it does. Made before anything is lent, so that whatever stops the
    command once the lend may have landed (an error, a Ctrl-C) finds what to take back."""

    world: World
    added: list[Quad] = field(default_factory=list)
    unindexed: bool = False
    recorded: list[Quad] = field(default_factory=list)
    entry: Lend | None = None  # the lend as recorded, and its lease on a shared store
    left: str | None = None  # why what was lent is still in the store (:meth:`take_back`)

    def lend(self, paths: Sequence[str], store: str, who: str) -> None:
        """Land the ``--world`` files ``paths`` in the world (the persistent ``--store``
        named ``store``) in one commit with its record, refusing them, before anything lands,
        if they hold an approval record; ``who`` (``a call``, ``discovery``) is what counts
        only the store's approvals."""
        quads = world_data(paths, store, who, "horismos tools approve", self.world.store)
        for _ in range(LEND_ATTEMPTS):
            if self._lent(quads):
                return
        raise Conflict(
            f"the lend of {', '.join(paths)} met other lends of the same data in each of "
            f"{LEND_ATTEMPTS} attempts; run the command again"
        )

    def _lent(self, quads: list[Quad]) -> bool:
        """One attempt at the lend of ``quads``: False when another writer's commit came
        between its reads and its own (nothing of it landed; read again)."""
        store = self.world.store
        held = set(store.which(quads))
        added = [q for q in quads if q not in held]
        stored = [q for q in quads if q in held]
        # stored only through another's lend (a killed lender's, its lease still running):
        # lent by this one too, else a call completing here read them and the other's
        # take-back removed them later
        others = lent_elsewhere(store, stored)
        borrowed = list(others)
        # instances it brings have no short id: the store no longer indexes every instance
        unindexed = any(q[3] == INSTANCES for q in added) and indexes_every_instance(store)
        if not added and not unindexed and not borrowed:
            # nothing to lend, nor to take back (an attempt refused before lent nothing)
            self.added, self.unindexed, self.recorded = [], False, []
            return True
        if self.entry is None:
            self.entry = Lend.begin(self.world)  # a lease, on a shared store, before it lands
        # known before the commit: stopped inside it, the take-back finds them (removing
        # quads that did not land removes nothing)
        self.added, self.unindexed = [*added, *borrowed], unindexed
        self.recorded = self.entry.record(self.added, unindexed)
        # only while what it adds is still absent: another lend of the same data, or a call
        # that completed with it, landed meanwhile (its take-back would remove what is now
        # another's, or the store's own): then read again
        change = Change(
            add=[*added, *self.recorded],
            remove=[INDEXED_EVERY_INSTANCE] if unindexed else [],
            absent=tuple(added),
        )
        if borrowed:
            # sharing them with other lends: counted, so that a completion or take-back that
            # read the copies before this lend reads them again (:class:`Sharing`); and only
            # while the copies it shares are stored (a call that completed meanwhile made them
            # the store's own: then they are not lent at all)
            copies = tuple(c for found in others.values() for c in found)
            # each count as it is: a compare-and-set; then the holders read again, for a
            # lend that came to share the data between the two reads holds a count this
            # commit would not move, and its completion would not read this lend's copies
            counted = Sharing.read(store, lends_of(copies)).counted()
            again = lent_elsewhere(store, stored)
            if {c for found in again.values() for c in found} != set(copies):
                return False
            change.add += counted.add
            change.remove += counted.remove
            change.expect = (*copies, *counted.expect)
            change.absent = (*change.absent, *counted.absent)
        try:
            self.world.commit(change)
        except Conflict:
            return False
        return True

    def count(self) -> int:
        """How many quads were lent (the store held none of them, or only through another
        lend)."""
        return len(self.added)

    def record(self) -> Change:
        """The record of the lend, which a call's completed commit removes with its effects,
        and every other lend's copy of what it lent, read as that commit is made (a lend
        made while the tool ran included): what was lent then stays with what read it, and no
        later take-back, in process or of a process gone, removes it. The change requires
        that no lend came to share what it lent since (:class:`~._lends.Sharing`): a commit
        refused so asks for the record again."""
        if self.entry is None:
            return Change()  # nothing lent
        sharing = Sharing.read(self.world.store, [self.entry.iri])
        others = lent_elsewhere(self.world.store, self.added, but=self.entry.iri)
        guard = sharing.guard()
        return Change(
            remove=[
                *self.recorded,
                *sharing.stored(),
                *(c for copies in others.values() for c in copies),
            ],
            expect=guard.expect,
            absent=guard.absent,
        )

    def kept(self) -> None:
        """What was lent stays, as loaded: its record, and every other lend's copy of it,
        removed in one commit (:meth:`land_with`), then :meth:`keep`."""
        self.land_with(Change())
        self.keep()

    def land_with(self, change: Change, world: World | None = None) -> None:
        """Land ``change`` (a completed call's last commit; nothing, for what is kept as
        loaded) with what :meth:`record` says of this lend, read again when another lend came
        to share the data between that read and the commit (:class:`~._lends.Sharing`). The
        last read lands unguarded: the tool has acted, and its approval's use and its intent's
        end must land whatever lends come and go meanwhile. What ``change`` itself expects
        (the projections an adapter commit replaces) is expected on every try, and a conflict
        over what it requires absent (an approval's use) is the caller's. ``world``: the one
        to commit in, a call's runner's (its commits fenced by its lease); this lend's by
        default."""
        commit = (world or self.world).commit
        for attempt in range(LEND_ATTEMPTS):
            lent = self.record()
            if not (change.add or change.remove or lent.remove):
                return
            guarded = attempt < LEND_ATTEMPTS - 1
            try:
                commit(
                    Change(
                        add=change.add,
                        remove=[*change.remove, *lent.remove],
                        expect=(*change.expect, *(lent.expect if guarded else ())),
                        absent=(*change.absent, *(lent.absent if guarded else ())),
                    )
                )
                return
            except Conflict as e:
                if not guarded or set(e.present) & set(change.absent):
                    raise

    def keep(self) -> None:
        """What was lent stays: a call's effects, which read it, have landed (its record
        removed in the same commit)."""
        self.added, self.unindexed, self.recorded = [], False, []
        self._end()

    def take_back(self) -> int:
        """Remove what was lent, with its record, in one commit; the mark lifted for it is set
        again (the instances it did not index are gone with it). How many quads that removed:
        taking back twice, or after :meth:`keep`, does nothing.

        A take-back that cannot land (other lends came to share the data under each of its
        tries, the store refused the write) raises nothing: it runs as a command ends, in a
        ``finally``, and its error took the place of what the command did (a refused call's
        envelope, its exit code). The lend ends all the same, its record left in the store, so
        the next command opening the store for writing takes it back
        (:func:`~._lends.take_back_abandoned`); :attr:`left` says so, for the command to
        tell (:meth:`left_note`)."""
        taken = 0
        if self.entry is not None and (self.added or self.unindexed or self.recorded):
            own = [q for q in self.recorded if q[3] != LENDS]  # its copies of what it lent
            record = [q for q in self.recorded if q[3] == LENDS]
            try:
                taken = give_back(self.world, self.entry.iri, record, own, self.unindexed)
            except (Conflict, StoreError) as e:
                self.left = (
                    f"the --world data this command lent the store could not be taken back "
                    f"({e}); it stays until the next command that opens the store for writing "
                    "takes it back"
                )
        try:
            self.keep()
        except StoreError as e:  # the lease not given back (a store not answering): it runs out
            self.left = (f"{self.left}; " if self.left else "") + (
                f"the lease of the lend could not be given back ({e}); it runs out by itself"
            )
        return taken

    def left_note(self) -> str | None:
        """:attr:`left`, told once: the note a command prints when its take-back could not
        land (None: it landed, or nothing was lent)."""
        note, self.left = self.left, None
        return note

    def _end(self) -> None:
        if self.entry is not None:
            self.entry.end()


def end_lend(lent: LentWorld | None, command: str) -> None:
    """What ``lent`` lent taken back as ``horismos command`` ends (None: nothing was lent), in
    its ``finally``: a take-back that could not land told on stderr as a note, whatever the
    command goes on to say or raise (:meth:`LentWorld.take_back`)."""
    if lent is None:
        return
    lent.take_back()
    if (note := lent.left_note()) is not None:
        print(f"horismos {command}: note: {redact_text(note)}", file=sys.stderr)
