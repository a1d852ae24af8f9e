"""Fleet files in the back-office: the client column of a unit or driver file (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import widgets

from apps.clients.models import Client
from apps.core.admin_import import cell_text
from apps.core.identifiers import dot_or_none, not_a_dot_message


class ClientByDotWidget(widgets.Widget):
    """The row's client, by DOT number, among the importing staff member's live clients: a DOT
    read as the API reads one (`dot_or_none`), what is no DOT refused in its words."""

    def __init__(self):
        super().__init__()
        self._clients: dict | None = None

    def reset(self) -> None:
        self._clients = None

    def clean(self, value, row=None, **kwargs):
        # Normalised as DOTs are stored (leading zeros dropped); text that is no DOT is refused
        # as the API refuses a DOT parameter, naming what the staff member wrote.
        text = cell_text(value)
        if not text:
            raise ValueError("The DOT number of the client is missing.")
        dot = dot_or_none(text)
        if dot is None:
            raise ValueError(not_a_dot_message(text))
        if self._clients is None:
            self._clients = {}
            for client in Client.objects.for_user(kwargs["user"]).live():
                self._clients.setdefault(client.dot, []).append(client)
        matches = self._clients.get(dot, [])
        if not matches:
            raise ValueError(f"No client with DOT {dot} in your agencies.")
        if len(matches) > 1:
            raise ValueError(f"DOT {dot} names several of your clients; import them one by one.")
        return matches[0]

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else value.dot
