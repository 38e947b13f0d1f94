"""The GitHub client's bound on requests in flight, and who goes first when it is reached."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from crawler.upstream.sources.github.api import RequestSlots


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if condition():
            return
        time.sleep(0.002)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_waiting_query_goes_before_waiting_trees_and_the_bound_holds() -> None:
    slots = RequestSlots(1)
    order: list[str] = []
    in_flight = [0, 0]  # now, most
    lock = threading.Lock()
    holder_may_go = threading.Event()

    def request(name: str, urgent: bool, hold: threading.Event | None = None) -> None:
        with slots.taken(urgent=urgent):
            with lock:
                order.append(name)
                in_flight[0] += 1
                in_flight[1] = max(in_flight)
            if hold is not None:
                hold.wait(5)
            with lock:
                in_flight[0] -= 1

    holder = threading.Thread(target=request, args=("first tree", False, holder_may_go))
    holder.start()
    _wait_for(lambda: order == ["first tree"], "the first request")
    trees = [threading.Thread(target=request, args=(f"tree {i}", False)) for i in range(3)]
    for tree in trees:
        tree.start()
    time.sleep(0.05)  # the trees are waiting for the one slot
    query = threading.Thread(target=request, args=("query", True))
    query.start()
    _wait_for(lambda: slots._urgent == 1, "the query to wait")
    holder_may_go.set()
    for thread in (holder, query, *trees):
        thread.join(5)
    assert order[:2] == ["first tree", "query"]  # the query did not wait behind the trees
    assert sorted(order[2:]) == ["tree 0", "tree 1", "tree 2"]
    assert in_flight == [0, 1]  # never more than the one slot


def test_while_trees_wait_queries_hold_a_quarter_of_the_slots_and_all_of_them_otherwise() -> None:
    """A batch's queries sent at once took every slot while the trees their answers made waited
    (each query waiting on the server's execution for hundreds of milliseconds): with trees
    waiting, queries now hold at most a quarter of the slots (2 of 8), the trees the rest; with
    no tree waiting, the queries go as many at a time as the slots allow."""
    slots = RequestSlots(8)
    lock = threading.Lock()
    now = {"query": 0, "tree": 0}
    most = {"query": 0, "tree": 0}
    first_wave, second_wave = threading.Event(), threading.Event()

    def request(kind: str, hold: threading.Event) -> None:
        with slots.taken(urgent=kind == "query"):
            with lock:
                now[kind] += 1
                most[kind] = max(most[kind], now[kind])
            hold.wait(5)
            with lock:
                now[kind] -= 1

    holders = [threading.Thread(target=request, args=("tree", first_wave)) for _ in range(8)]
    for thread in holders:
        thread.start()
    _wait_for(lambda: now["tree"] == 8, "eight trees in flight")
    trees = [threading.Thread(target=request, args=("tree", second_wave)) for _ in range(6)]
    for thread in trees:
        thread.start()
    time.sleep(0.05)  # the trees are waiting for a slot
    queries = [threading.Thread(target=request, args=("query", second_wave)) for _ in range(6)]
    for thread in queries:
        thread.start()
    _wait_for(lambda: slots._urgent == 6, "the queries to wait")
    first_wave.set()  # eight slots free: six queries and six trees want them
    for thread in holders:
        thread.join(5)
    _wait_for(lambda: now["query"] + now["tree"] == 8, "the slots to fill again")
    with lock:
        assert now == {"query": 2, "tree": 6}
    second_wave.set()
    for thread in (*queries, *trees):
        thread.join(5)
    assert now == {"query": 0, "tree": 0} and most["tree"] == 8

    alone = threading.Event()  # no tree waiting: queries take every slot
    burst = [threading.Thread(target=request, args=("query", alone)) for _ in range(8)]
    for thread in burst:
        thread.start()
    _wait_for(lambda: now["query"] == 8, "eight queries in flight")
    alone.set()
    for thread in burst:
        thread.join(5)
    assert most["query"] == 8
