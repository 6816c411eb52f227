"""A loopback capture read back into one `WireExchange` per HTTP request, joined to the replay's
raw timings by the request-id header.

scapy reads the pcap (its nanosecond stamps kept as integers); each TCP connection's two
directions are put back in sequence order (duplicates and overlaps trimmed; a gap, from a
kernel drop, ends that connection's reading and is counted); h11 parses the HTTP/1.1 requests and
responses of each keep-alive connection in turn (no pipelining: the k-th response answers the
k-th request). Each response body is split into server-sent events the way the client splits it
(a blank line ends an event) and every event is stamped with the capture time of the segment
that completed it, as the client stamps it with the read that completed it. The replay's own
reader (`stream_reader`) then decides which event is the first token, so the wire and the client
count the same event.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import h11
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader

from pipeline.replay.pacing.engine import REQUEST_ID_HEADER
from pipeline.replay.reading.reply_reading import StreamError
from pipeline.replay.recording.records import RequestOutcome
from pipeline.replay.transport.api_kinds import stream_reader

LARGEST_FRAME = 1 << 20  # a loopback GSO segment can exceed scapy's default 64 KiB read


@dataclass
class WireExchange:
    """One request and its response on the wire; capture-clock (CLOCK_REALTIME) ns."""

    request_id: str | None
    client_port: int
    t_request_first_ns: int  # the segment carrying the request's first byte
    t_request_last_ns: int = 0  # ... and its last byte: the server has the whole request
    t_response_first_ns: int | None = None  # the response's first byte (status line)
    t_first_token_ns: int | None = None  # the segment that completed the first token event
    t_end_ns: int | None = None  # the segment that completed the response body
    token_times_ns: list[int] = field(default_factory=list)  # each token event, as t_first_token_ns
    stream_error: str | None = None


@dataclass
class WireReading:
    exchanges: list[WireExchange] = field(default_factory=list)
    connections: int = 0
    connections_with_gaps: int = 0  # a sequence gap (a packet the capture lost): read up to it
    truncated_frames: int = 0


@dataclass
class _Segment:
    seq: int
    payload: bytes
    t_ns: int


def read_capture(path: Path, server_port: int, api: str = "chat") -> WireReading:
    """Every HTTP exchange with `server_port` in the capture at `path`."""
    directions: dict[tuple[str, int, bool], list[_Segment]] = defaultdict(list)
    starts: dict[tuple[str, int, bool], int] = {}
    reading = WireReading()
    for t_ns, frame, truncated in _frames(path):
        reading.truncated_frames += truncated
        tcp = frame.getlayer(TCP)
        network = frame.getlayer(IP) or frame.getlayer(IPv6)
        if tcp is None or network is None or server_port not in (tcp.sport, tcp.dport):
            continue
        to_server = tcp.dport == server_port
        key = (network.src if to_server else network.dst, tcp.sport if to_server else tcp.dport, to_server)
        if tcp.flags.S:
            starts[key] = tcp.seq + 1
        payload = bytes(tcp.payload)
        if payload:
            directions[key].append(_Segment(tcp.seq, payload, t_ns))
    for host, port in sorted({(host, port) for host, port, _ in directions}):
        requests, request_gap = _stream(directions[(host, port, True)], starts.get((host, port, True)))
        responses, response_gap = _stream(directions[(host, port, False)], starts.get((host, port, False)))
        reading.connections += 1
        reading.connections_with_gaps += request_gap or response_gap
        exchanges = list(_requests(requests, port))
        _answer(exchanges, responses, api)
        reading.exchanges.extend(exchanges)  # one the server never answered keeps t_end_ns None
    return reading


def _frames(path: Path) -> Iterator[tuple[int, Ether, bool]]:
    with RawPcapReader(str(path)) as reader:
        scale = 1 if reader.nano else 1000
        while True:
            try:
                data, meta = reader._read_packet(LARGEST_FRAME)  # scapy's public read stops at 64 KiB
            except EOFError:
                return
            yield meta.sec * 1_000_000_000 + meta.usec * scale, Ether(data), meta.caplen > len(data)


def _stream(segments: list[_Segment], start: int | None) -> tuple[list[tuple[bytes, int]], bool]:
    """One direction's bytes in sequence order as (block, capture time); True if a gap cut it."""
    blocks: list[tuple[bytes, int]] = []
    expected = start if start is not None else (segments[0].seq if segments else 0)
    for segment in segments:
        offset = (segment.seq - expected) % (1 << 32)
        if offset >= 1 << 31:  # behind: a duplicate, or a retransmission overlapping what was read
            overlap = (expected - segment.seq) % (1 << 32)
            if overlap >= len(segment.payload):
                continue
            blocks.append((segment.payload[overlap:], segment.t_ns))
        elif offset == 0:
            blocks.append((segment.payload, segment.t_ns))
        else:
            return blocks, True
        expected = (segment.seq + len(segment.payload)) % (1 << 32)
    return blocks, False


def _requests(blocks: list[tuple[bytes, int]], client_port: int) -> Iterator[WireExchange]:
    """The requests of one connection, in order, with the capture times of their first and last
    bytes and their request-id header."""
    parser = h11.Connection(h11.SERVER)
    current: WireExchange | None = None
    for data, t_ns in blocks:
        parser.receive_data(data)
        while True:
            if current is None and parser.their_state is h11.IDLE and _unread(parser):
                current = WireExchange(None, client_port, t_request_first_ns=t_ns)
            event = parser.next_event()
            if isinstance(event, h11.Request):
                assert current is not None
                headers = {name.decode().lower(): value.decode() for name, value in event.headers}
                current.request_id = headers.get(REQUEST_ID_HEADER)
            elif isinstance(event, h11.EndOfMessage):
                assert current is not None
                current.t_request_last_ns = t_ns
                yield current
                current = None
                leftover = parser.trailing_data[0]
                parser = h11.Connection(h11.SERVER)  # the next request on the kept-alive connection
                if leftover:  # (no data at all would tell h11 the connection closed)
                    parser.receive_data(leftover)
            elif event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                break


def _unread(parser: h11.Connection) -> bool:
    return bool(parser.trailing_data[0])


def _answer(exchanges: list[WireExchange], blocks: list[tuple[bytes, int]], api: str) -> None:
    """Fill each exchange's response times from the connection's responses, in order."""
    pending = iter(exchanges)
    exchange = next(pending, None)
    parser, events = _response_parser(), _EventSplitter(api)
    for data, t_ns in blocks:
        if exchange is None:
            return
        parser.receive_data(data)
        while exchange is not None:
            if exchange.t_response_first_ns is None and _unread(parser):
                exchange.t_response_first_ns = t_ns
            event = parser.next_event()
            if isinstance(event, h11.Data):
                events.feed(bytes(event.data), t_ns, exchange)
            elif isinstance(event, h11.EndOfMessage):
                events.end(t_ns, exchange)
                exchange.t_end_ns = t_ns
                leftover = parser.trailing_data[0]
                exchange, parser, events = next(pending, None), _response_parser(), _EventSplitter(api)
                if leftover:
                    parser.receive_data(leftover)
            elif event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                break


def _response_parser() -> h11.Connection:
    """A client-side parser that has 'sent' a request, so that it reads the response to it."""
    parser = h11.Connection(h11.CLIENT)
    parser.send(h11.Request(method="POST", target="/", headers=[("Host", "wire"), ("Content-Length", "0")]))
    parser.send(h11.EndOfMessage())
    return parser


class _EventSplitter:
    """A response body split into SSE events (data lines joined by newlines), each fed to the
    replay's reader of `api` with the capture time of the segment that completed it."""

    def __init__(self, api: str) -> None:
        self.outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
        self.reader = stream_reader(api, self.outcome)
        self.pending = b""
        self.data: list[str] = []

    def feed(self, block: bytes, t_ns: int, exchange: WireExchange) -> None:
        lines = (self.pending + block).split(b"\n")
        self.pending = lines.pop()
        for raw in lines:
            line = raw.decode("utf-8").rstrip("\r")
            if line.startswith("data:"):
                self.data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif not line and self.data:
                self._event("\n".join(self.data), t_ns, exchange)
                self.data = []

    def end(self, t_ns: int, exchange: WireExchange) -> None:
        if self.pending.startswith(b"data:"):
            self.data.append(self.pending.decode("utf-8")[5:].lstrip(" "))
        if self.data:
            self._event("\n".join(self.data), t_ns, exchange)

    def _event(self, data: str, t_ns: int, exchange: WireExchange) -> None:
        try:
            self.reader.feed(data, t_ns)
        except StreamError as error:
            exchange.stream_error = exchange.stream_error or error.error_type
        chunks = self.outcome.chunk_times_ns
        exchange.token_times_ns = chunks
        exchange.t_first_token_ns = chunks[0] if chunks else None


@dataclass(frozen=True)
class WirePair:
    """One request's client stamps against the wire's (ns). Positive `send_lead_ns`: the client
    stamped its send before the request's last byte passed the capture tap; positive lags: the
    client stamped after the wire. The TTFT and E2E errors are differences of differences, each
    on one clock, so the clock mapping cancels out of them."""

    request_id: str
    send_lead_ns: int  # wire last request byte − client send
    response_lag_ns: int  # client's response-headers stamp − wire's first response byte
    first_token_lag_ns: int  # client first token − wire first token
    end_lag_ns: int  # client end − wire end of the response body
    token_lags_ns: tuple[int, ...]  # each token event: client receipt − wire (the same events, in order)
    ttft_error_ns: int  # client TTFT − wire TTFT (from the request's last byte)
    e2e_error_ns: int  # client E2E − wire E2E


def join(rows: list[dict], reading: WireReading, to_wall) -> tuple[list[WirePair], list[str]]:
    """The replay's ok rows joined to the wire by request id (of an id's exchanges, the last one
    answered: a request re-sent past a stale connection is timed from its last send); the ids not
    found whole."""
    answered_last = sorted(reading.exchanges, key=lambda e: (e.t_end_ns is not None, e.t_request_first_ns))
    on_wire = {exchange.request_id: exchange for exchange in answered_last if exchange.request_id is not None}
    pairs, missing = [], []
    for row in rows:
        if row["status"] != "ok":
            continue
        wire = on_wire.get(row["request_id"])
        if wire is None or None in (wire.t_first_token_ns, wire.t_end_ns, wire.t_response_first_ns):
            missing.append(row["request_id"])
            continue
        sent, first, end = to_wall(row["t_sent_ns"]), to_wall(row["t_first_token_ns"]), to_wall(row["t_end_ns"])
        assert wire.t_first_token_ns is not None and wire.t_end_ns is not None and wire.t_response_first_ns is not None
        wire_ttft = wire.t_first_token_ns - wire.t_request_last_ns
        wire_e2e = wire.t_end_ns - wire.t_request_last_ns
        pairs.append(
            WirePair(
                request_id=row["request_id"],
                send_lead_ns=wire.t_request_last_ns - sent,
                response_lag_ns=to_wall(row["t_first_byte_ns"]) - wire.t_response_first_ns,
                first_token_lag_ns=first - wire.t_first_token_ns,
                end_lag_ns=end - wire.t_end_ns,
                token_lags_ns=tuple(
                    to_wall(row["t_sent_ns"] + offset) - on_wire
                    for offset, on_wire in zip(row["chunk_offsets_ns"], wire.token_times_ns, strict=True)
                ),
                ttft_error_ns=(row["t_first_token_ns"] - row["t_sent_ns"]) - wire_ttft,
                e2e_error_ns=(row["t_end_ns"] - row["t_sent_ns"]) - wire_e2e,
            )
        )
    return pairs, missing
