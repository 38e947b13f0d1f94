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
