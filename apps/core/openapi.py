"""Schema generation: every error response is declared as application/problem+json."""

from __future__ import annotations

from drf_standardized_errors.openapi import AutoSchema

from apps.core.problems import PROBLEM_CONTENT_TYPE


class ProblemAutoSchema(AutoSchema):
    def _get_response_for_code(
        self, serializer, status_code, media_types=None, direction="response"
    ):
        if str(status_code)[0] in "45":
            media_types = [PROBLEM_CONTENT_TYPE]
        return super()._get_response_for_code(serializer, status_code, media_types, direction)

    def _get_error_response_examples(self):
        # The library's examples show its own error format, not problem+json.
        return []

    def _should_add_http404_error_response(self) -> bool:
        # Every /v1 route can answer 404: agency scoping hides objects and unknown ids.
        return True

    def _should_add_http403_error_response(self) -> bool:
        return bool(self.view.get_permissions())
