"""The terminal client shows table chat in its log as the plain text it is:
the line is a rich Text, so markup in a message is never interpreted."""

from __future__ import annotations

from google.protobuf import any_pb2
from rich.text import Text
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import social_pb2

from clients.terminal.table import TableScreen


def chat_event(text: str, channel: social_pb2.ChatChannel.ValueType) -> match_pb2.MatchEvent:
    packed = any_pb2.Any()
    packed.Pack(social_pb2.ChatMessage(sender_name="ana", text=text, channel=channel))
    return match_pb2.MatchEvent(id=7, chat=packed)


def test_chat_lines_are_text_and_say_which_channel() -> None:
    screen = TableScreen(None, "t1")  # type: ignore[arg-type]  # describe() needs no connection
    markup = "[bold red]oi[/] <script>alert(1)</script>"
    line = screen.describe(chat_event(markup, social_pb2.CHAT_CHANNEL_TABLE_PLAYERS))
    assert line == f"ana: {markup}"
    assert Text(line).plain == line  # shown as written, brackets and all
    spectator = screen.describe(chat_event("psiu", social_pb2.CHAT_CHANNEL_TABLE_SPECTATORS))
    assert spectator == "ana (spectator): psiu"
