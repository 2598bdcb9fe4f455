"""The index's state machine (kenning.state): which moves it allows, what its listeners hear, and
that ``indexer.update`` moves an engine through a run's phases in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.config import Config
from kenning.engine import Engine
from kenning.indexer import update
from kenning.state import ALLOWED, IllegalTransition, IndexStates, Transition
from kenning.types import INDEX_STATES, IndexState


def _at(state: IndexState) -> IndexStates:
    """A machine in ``state``, reached by allowed moves."""
    states = IndexStates()
    if state == "embedding":
        states.begin_embedding()
    elif state == "ready":
        states.finish(pending=False)
    elif state == "error":
        states.fail("broken")
    assert states.state == state
    return states


def test_every_state_has_a_row_and_a_run_may_start_from_any() -> None:
    assert set(ALLOWED) == set(INDEX_STATES)
    for state in INDEX_STATES:
        states = _at(state)
        states.begin_scan()
        assert states.state == "scanning" and states.message is None


@pytest.mark.parametrize("state", ["ready", "error"])
def test_embedding_only_follows_a_scan(state: IndexState) -> None:
    states = _at(state)
    with pytest.raises(IllegalTransition, match=f"'{state}' cannot become 'embedding'"):
        states.begin_embedding()
    assert states.state == state  # a refused move changes nothing
    with pytest.raises(IllegalTransition):
        states.finish(pending=True)


@pytest.mark.parametrize("state", INDEX_STATES)
def test_any_state_may_fail_or_become_ready_read_only(state: IndexState) -> None:
    states = _at(state)
    states.ready("another process writes this index")
    assert (states.state, states.message) == ("ready", "another process writes this index")
    _at(state).fail("disk full")


def test_finish_is_ready_or_embedding_while_chunks_wait() -> None:
    states = IndexStates()
    states.begin_embedding()
    states.finish(pending=True)
    assert states.state == "embedding"
    states.finish(pending=False)
    assert states.state == "ready"


def test_messages_a_scan_clears_the_last_runs_and_the_embedding_phase_keeps_the_scans() -> None:
    states = IndexStates()
    states.fail("indexing failed: boom")
    states.begin_scan()
    assert states.message is None
    states.note("no files to index: empty folder")
    assert states.state == "scanning"  # a note is not a move
    states.begin_embedding()
    assert states.message == "no files to index: empty folder"
    states.finish(pending=True, message="endpoint down")
    assert states.message == "endpoint down"
    states.finish(pending=True)  # KEEP: the message stays
    assert states.message == "endpoint down"


def test_listeners_hear_every_move_in_order_and_only_while_listening() -> None:
    states = IndexStates()
    heard: list[Transition] = []
    other: list[IndexState] = []
    states.add_listener(lambda move: other.append(move.new))
    with states.listening(heard.append):
        states.begin_scan()  # scanning -> scanning is a move too: a new run's scan
        states.note("a note")  # not a move: not heard
        states.begin_embedding()
        states.finish(pending=False)
    states.begin_scan()
    assert heard == [
        Transition("scanning", "scanning", None, True),
        Transition("scanning", "embedding", "a note", True),
        Transition("embedding", "ready", "a note", False),
    ]
    assert other == ["scanning", "embedding", "ready", "scanning"]


def test_a_refused_move_is_not_heard() -> None:
    states = _at("ready")
    heard: list[Transition] = []
    states.add_listener(heard.append)
    with pytest.raises(IllegalTransition):
        states.begin_embedding()
    assert heard == []


def test_update_moves_the_engine_through_the_phases(workspace: Path) -> None:
    heard: list[tuple[IndexState, bool]] = []
    with Engine(workspace, Config()).open() as engine:
        engine.states.add_listener(lambda move: heard.append((move.new, move.began)))
        update(engine)
        assert engine.state == "ready"
        update(engine, embed=False)
        assert engine.state == "ready"
        update(engine, should_stop=lambda: True)  # stopped after its scan, nothing pending
        assert engine.state == "ready"
    assert heard == [
        ("scanning", True),
        ("embedding", True),
        ("ready", False),
        ("scanning", True),
        ("ready", False),
        ("scanning", True),
        ("ready", False),
    ]


def test_update_stopped_after_its_scan_leaves_the_chunks_waiting(workspace: Path) -> None:
    with Engine(workspace, Config()).open() as engine:
        scanned, embedded = update(engine, should_stop=lambda: True)
        assert scanned.files_changed == 0 and embedded.embedded == 0  # stopped before its first batch
        asked = iter([False, True])  # the scan's batch runs; stop before embedding
        scanned, embedded = update(engine, should_stop=lambda: next(asked, True))
        assert scanned.files_changed == 5 and embedded.embedded == 0
        assert engine.state == "embedding" and engine.status().pending > 0
