"""Content negotiation by the `Accept` header's quality values, and that names what a resource
offers instead of answering a bare 404."""

from __future__ import annotations

import functools
import re

from rest_framework.exceptions import NotAcceptable, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.utils.mediatypes import _MediaType

# RFC 9110 12.4.2: "0" to "1" with at most three decimals.
QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


@functools.cache
def renders_several_formats(renderer_classes: tuple[type, ...]) -> bool:
    """Whether a view rendering with `renderer_classes` takes `?format=`: only one rendering two
    formats or more (certificates: JSON or PDF). Elsewhere the parameter is not the operation's
    and is ignored, as any it does not take (apps.core.query_params). Once per tuple of
    renderer classes."""
    return len({renderer.format for renderer in renderer_classes}) > 1


def quality(accepted: _MediaType) -> float:
    """A range's q (1 when it names none). A q that is not a qvalue counts as none, as every
    q did before quality values were read: the range is not refused for a malformed weight."""
    text = accepted.params.get("q")
    if text is None or not QVALUE.fullmatch(text.strip()):
        return 1.0
    return float(text)


class StrictContentNegotiation(DefaultContentNegotiation):
    """The representation the caller wants most of those the route offers (RFC 9110 12.5.1):
    each renderer's quality is the q of the most specific `Accept` range that matches it (a
    range's own weight: `application/*;q=0.9, application/json;q=0.1` wants PDF more than
    JSON); the highest q wins, then the more specific range, then the route's order of
    renderers (JSON first). q=0 means "not acceptable": a route with nothing else acceptable
    answers 406 (problem+json, rendered in JSON whatever was asked). DRF's own negotiation
    ranks ranges by specificity only and never reads q.

    `?format=` naming a format the view cannot render is a 400 on `format` (on a view that
    renders several; one that renders only JSON takes no `format` and ignores it): DRF's default
    raises Http404 there, which reads as "no such resource"; an integrator who asked for
    `?format=xml` should learn which formats exist (json, and pdf on certificates).

    A request that names no format and accepts anything (no `Accept`, or `*/*`: most
    integrations) gets the first renderer with its own media type, without the Accept list
    parsed and matched on every request (issue 18).
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        format = format_suffix
        param = self.settings.URL_FORMAT_OVERRIDE
        if (
            not format
            and param
            and param in request.query_params  # first: most requests name no format
            and renders_several_formats(tuple(type(renderer) for renderer in renderers))
        ):
            format = request.query_params[param]
        if renderers and not format and request.META.get("HTTP_ACCEPT", "*/*") == "*/*":
            return renderers[0], renderers[0].media_type
        if format:
            renderers = self.filter_renderers(renderers, format)
        accepts = self._get_parsed_accept_list(request)
        best, best_rank = None, None
        for renderer in renderers:
            offered = _MediaType(renderer.media_type)
            matched = None
            for accepted in accepts:  # the first of the most specific ranges that match
                if offered.match(accepted) and (
                    matched is None or accepted.precedence > matched.precedence
                ):
                    matched = accepted
            if matched is None:
                continue
            rank = (quality(matched), matched.precedence)
            if rank[0] > 0 and (best_rank is None or rank > best_rank):
                best, best_rank = (renderer, offered, matched), rank
        if best is None:
            raise NotAcceptable(available_renderers=renderers)
        renderer, offered, matched = best
        if offered.precedence > matched.precedence:
            # A range (`*/*`, `application/*`) chose it: the renderer's own type, with the
            # range's parameters, as DRF answers (`indent` is read from them).
            params = tuple(f"{key}={value}" for key, value in matched.params.items())
            return renderer, ";".join((renderer.media_type, *params))
        return renderer, matched.orig

    def filter_renderers(self, renderers, format):
        matching = [renderer for renderer in renderers if renderer.format == format]
        if not matching:
            offered = ", ".join(sorted({renderer.format for renderer in renderers}))
            raise ValidationError(
                {"format": [f"Unknown format '{format}'; this resource offers: {offered}."]}
            )
        return matching
