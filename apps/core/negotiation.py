"""Content negotiation that names what a resource offers instead of answering a bare 404."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation


class StrictContentNegotiation(DefaultContentNegotiation):
    """`?format=` naming a format the view cannot render is a 400 on `format`.

    DRF's default raises Http404 there, which reads as "no such resource"; an integrator who
    asked for `?format=xml` should learn which formats exist (json, and pdf on certificates).

    A request that names no format and accepts anything (no `Accept`, or `*/*`: most
    integrations) gets what DRF's negotiation gives it, the first renderer with its own media
    type, without the Accept list parsed and matched on every request (issue 18).
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        if (
            renderers
            and not format_suffix
            and request.META.get("HTTP_ACCEPT", "*/*") == "*/*"
            and not request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)

    def filter_renderers(self, renderers, format):
        matching = [renderer for renderer in renderers if renderer.format == format]
        if not matching:
            offered = ", ".join(sorted({renderer.format for renderer in renderers}))
            raise ValidationError(
                {"format": [f"Unknown format '{format}'; this resource offers: {offered}."]}
            )
        return matching
