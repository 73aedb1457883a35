"""A larger brief budget unfolds the recurring log kinds of a flood (issue 37): ``brief --budget 6000`` printed
the same incident block as ``--budget 2000`` (the block's cap was 900 tokens at any budget, eight kinds at
most). Now more budget shows more kinds, each with its count, first and last time and sector, and what is
left out is still counted, the shown and the counted adding up to the window's kinds and events.

The flood is written after the templates of loghub's HDFS and ZooKeeper samples (block replication errors,
connection resets, leader elections), 24 kinds across six nodes over four minutes, each repeated a
different number of times; the texts are written here after those templates, the data itself is not copied."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.api import Memory

T0 = datetime(2026, 3, 1, 14, 0, tzinfo=UTC)
TEMPLATES = [
    ("E1", 0.8, "PacketResponder {n} for block blk_{b} terminating with exception: java.io.IOException: Connection reset by peer"),
    ("E2", 0.8, "DataXceiver error processing WRITE_BLOCK operation src: /10.250.19.{n}:50010 dst: /10.250.14.38:50010"),
    ("E3", 0.5, "Slow BlockReceiver write packet to mirror took {n}ms (threshold=300ms)"),
    ("E4", 0.8, "Exception in receiveBlock for block blk_{b} java.io.EOFException: while trying to read 65557 bytes"),
    ("E5", 0.5, "Interrupted while waiting for message on queue (sid {n})"),
    ("E6", 0.8, "Unexpected exception causing shutdown while sock still open (myid {n})"),
    ("E7", 0.5, "Connection broken for id {n}, my id = 3, error ="),
    ("E8", 0.2, "Notification time out: {n}00"),
    ("E9", 0.5, "Cannot open channel to {n} at election address /10.10.34.{n}:3888"),
    ("E10", 0.8, "Unable to read additional data from client sessionid 0x14ede63a5a{n}, likely client has closed socket"),
    ("E11", 0.5, "caught end of stream exception EndOfStreamException from session 0x{n}"),
    ("E12", 0.2, "Received connection request /10.10.34.{n}:40034"),
    ("E13", 0.8, "Got exception when processing sessionid:0x{n} type:create cxid:0x2 zxid:0xfffffffffffffffe txntype:unknown"),
    ("E14", 0.5, "Send worker leaving thread (sid {n})"),
    ("E15", 0.5, "Timeout exception when connecting to datanode 10.251.{n}.91:50010 for block blk_{b}"),
    ("E16", 0.8, "writeBlock blk_{b} received exception java.io.IOException: Could not read from stream"),
    ("E17", 0.5, "BlockReport of {n} blocks took 9 msec to generate and 12 msecs for RPC and NN processing"),
    ("E18", 0.8, "Failed to transfer blk_{b} to 10.251.{n}.5:50010 got java.net.SocketException: Broken pipe"),
    ("E19", 0.2, "Verification succeeded for blk_{b} (scan {n})"),
    ("E20", 0.5, "Changing view to {n} recorded because of leader election timeout"),
    ("E21", 0.8, "Error occurred during processing of message from peer {n}"),
    ("E22", 0.5, "Deleting block blk_{b} file /mnt/hadoop/dfs/data/current/subdir{n}/blk_{b}"),
    ("E23", 0.8, "Lost connection to follower {n}: java.net.SocketTimeoutException: Read timed out"),
    ("E24", 0.5, "Reopening log file for replica {n} after an I/O error"),
]
NODES = ("dn-01", "dn-02", "dn-03", "zk-1", "zk-2", "zk-3")


def _flood() -> tuple[list[dict[str, Any]], dict[str, int]]:
    events: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for k, (kind, criticality, template) in enumerate(TEMPLATES):
        count = 5 + 3 * k
        counts[kind] = count
        for n in range(count):
            at = T0 - timedelta(minutes=4) + timedelta(seconds=(200 * n) // count + k)
            events.append({"id": f"{kind}-{n}", "time": at.isoformat(), "type": kind, "sector": NODES[k % len(NODES)],
                           "criticality": criticality, "source": "loghub-shaped",
                           "text": template.format(n=n + 7, b=7000 + 31 * n + k)})
    return events, counts


KIND_LINE = re.compile(r"^- (E\d+) · (\S+) · (?:×(\d+) \d\d:\d\d:\d\d–\d\d:\d\d:\d\d|once at \d\d:\d\d:\d\d) · max", re.M)
HEADER = re.compile(r"Recurring log events \(not alerts\) since \S+: (\d+) kinds, (\d+) events")
REST = re.compile(r"^- \+(\d+) more kinds, (\d+) events", re.M)


def test_a_larger_budget_shows_more_recurring_kinds_each_counted(data_dir: object) -> None:
    events, counts = _flood()
    with Memory.open() as memory:
        memory.record_events(events, mission="hdfs", now=T0, embed=False)
        briefs = {budget: memory.rotation_brief(mission="hdfs", for_operator="bob@example.org", token_budget=budget,
                                                now=T0).text for budget in (2000, 6000)}
    shown: dict[int, int] = {}
    for budget, text in briefs.items():
        header = HEADER.search(text)
        assert header is not None, text[:3000]
        assert (int(header[1]), int(header[2])) == (len(TEMPLATES), len(events))
        lines = KIND_LINE.findall(text)
        for kind, sector, count in lines:  # each shown kind: its own count and sector
            assert int(count or 1) == counts[kind] and sector == NODES[(int(kind[1:]) - 1) % len(NODES)]
        rest = REST.search(text)
        left_kinds, left_events = (int(rest[1]), int(rest[2])) if rest else (0, 0)
        assert len(lines) + left_kinds == len(TEMPLATES), (budget, text[:4000])
        assert sum(counts[k] for k, _, _ in lines) + left_events == len(events)
        shown[budget] = len(lines)
    assert shown[6000] > shown[2000], shown
    assert shown[6000] >= 2 * shown[2000], shown  # three times the budget, at least twice the kinds
